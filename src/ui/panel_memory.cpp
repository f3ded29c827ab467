// The memory panel.
#include "ui/panel_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ui/text_fit.hpp"

namespace ui {

// Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); master weights a darker shade of
// the weights' blue, since they are the same parameters kept in fp32.
// The naive attention's scores (only where a run has them) in Okabe-Ito's orange, beside the activations.
std::vector<MemorySegment> memory_segments(const core::MemoryUsage& m) {
  std::vector<MemorySegment> out = {{"weights", m.weights, IM_COL32(86, 180, 233, 255)},
                                    {"master weights", m.master_weights, IM_COL32(0, 114, 178, 255)},
                                    {"gradients", m.gradients, IM_COL32(213, 94, 0, 255)},
                                    {"optimizer state", m.optimizer_state, IM_COL32(204, 121, 167, 255)},
                                    {"activations", m.activations, IM_COL32(0, 158, 115, 255)}};
  if (m.attention_scores > 0) out.push_back({"attention scores", m.attention_scores, IM_COL32(230, 159, 0, 255)});
  out.push_back({"workspace", m.workspace, IM_COL32(160, 160, 160, 255)});
  return out;
}

std::vector<SegmentSpan> segment_spans(const std::vector<MemorySegment>& segments, size_t scale_bytes, float x0,
                                       float width) {
  std::vector<SegmentSpan> spans;
  spans.reserve(segments.size());
  // Cumulative bytes to pixels, so that rounding never accumulates and the spans stay contiguous.
  size_t sum = 0;
  auto x_at = [&](size_t bytes) {
    return scale_bytes == 0 ? x0 : x0 + width * static_cast<float>(static_cast<double>(bytes) / scale_bytes);
  };
  for (const auto& s : segments) {
    const float a = x_at(sum);
    sum += s.bytes;
    spans.push_back({a, x_at(sum)});
  }
  return spans;
}

std::string format_bytes(size_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (b < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 100.0 * 1024 * 1024) return fmt::format("{:.2f} MiB", b / (1024 * 1024));
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

namespace {

size_t bar_total(const core::MemoryUsage& m) { return m.total() - m.dataset; }

// Legend: one colour per category (the attention scores where a run has them), wrapped to the panel's width.
void draw_legend(float spacing, bool attention_scores) {
  const float box = ImGui::GetTextLineHeight() * 0.8f;
  bool first = true;
  core::MemoryUsage categories;
  categories.attention_scores = attention_scores ? 1 : 0;
  for (const auto& s : memory_segments(categories)) {
    const float w = box + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(s.label).x;
    if (!first) same_line_if_fits(w, spacing * 2);
    first = false;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float y = p.y + (ImGui::GetTextLineHeight() - box) * 0.5f;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + box, y + box), s.color);
    ImGui::Dummy(ImVec2(box, ImGui::GetTextLineHeight()));
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::TextUnformatted(s.label);
  }
}

// One row of the panel: "GPU fp16" | bar | total, or for 16-bit the "fp32" | bar | total row under it.
struct MemoryRow {
  const core::BackendRun* run;
  std::string label, total;
  const core::MemoryUsage* memory;
  bool fp32_row;
};

// The rows of the backends that allocated: each one's bar, and for 16-bit a second row in fp32 with the change.
std::vector<MemoryRow> memory_rows(const DashboardView& view) {
  std::vector<MemoryRow> rows;
  for (const auto& run : view.runs) {
    const size_t now = bar_total(run.memory), fp32 = bar_total(run.memory_fp32);
    if (now == 0) continue;
    const bool compare = run.config.precision != core::Precision::FP32 || run.memory != run.memory_fp32;
    const std::string label = fmt::format("{} {}", backend_title(run.name), core::to_string(run.config.precision));
    rows.push_back({&run, label, format_bytes(now), &run.memory, false});
    if (!compare) continue;
    // More is possible: the CPU widens 16-bit operands into an fp32 workspace for its kernels.
    const double change = fp32 > 0 ? (static_cast<double>(now) - static_cast<double>(fp32)) / static_cast<double>(fp32)
                                   : 0;
    rows.back().total += std::abs(change) < 0.005 ? "  same" : fmt::format("  {:+.0f}%", 100 * change);
    rows.push_back({&run, "fp32", format_bytes(fp32), &run.memory_fp32, true});
  }
  return rows;
}

// The dataset, in words: on the GPU a copy of both splits, on the CPU none (its kernels read the loaded data).
std::string dataset_text(const DashboardView& view) {
  std::string dataset;
  for (const auto& run : view.runs) {
    if (run.memory.total() == 0) continue;
    dataset += fmt::format("{}{} {}", dataset.empty() ? "" : ", ", backend_title(run.name),
                           run.memory.dataset > 0 ? format_bytes(run.memory.dataset) : "none (reads it in place)");
  }
  return dataset;
}

}  // namespace

void MemoryPanel::draw_bar(const core::MemoryUsage& m, size_t scale_bytes, float bar_width, const std::string& total) {
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const auto segments = memory_segments(m);
  const auto spans = segment_spans(segments, scale_bytes, p.x, bar_width);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const size_t sum = bar_total(m);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].bytes == 0) continue;
    // At least one pixel, so that a small but present category is seen (its hover gives the size).
    const float x1 = std::max(spans[i].x1, spans[i].x0 + 1.0f);
    dl->AddRectFilled(ImVec2(spans[i].x0, p.y), ImVec2(x1, p.y + h), segments[i].color);
    if (ImGui::IsMouseHoveringRect(ImVec2(spans[i].x0, p.y), ImVec2(x1, p.y + h)))
      ImGui::SetTooltip("%s: %s (%.0f%% of this bar)", segments[i].label, format_bytes(segments[i].bytes).c_str(),
                        sum > 0 ? 100.0 * static_cast<double>(segments[i].bytes) / static_cast<double>(sum) : 0.0);
  }
  // The bar's full width is reserved, so the totals line up in a column.
  ImGui::Dummy(ImVec2(bar_width, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(total.c_str());
}

void MemoryPanel::draw(const DashboardView& view) {
  ImGui::TextDisabled("training memory, dataset apart");
  ImGui::SameLine();
  help_marker("The bytes each trainer allocated, by category. With 16-bit storage (fp16 / bf16) the weights the "
              "kernels read, the gradients and the activations take half the bytes; the optimizer still updates fp32 "
              "master weights and keeps its state in fp32, so the model shrinks by less than half. Activations grow "
              "with the batch size. In 16-bit, the second bar is the same model with every tensor in fp32, on the "
              "same scale.");
  // One scale for every bar: the largest of them fills the width.
  size_t scale = 0;
  for (const auto& run : view.runs) scale = std::max({scale, bar_total(run.memory), bar_total(run.memory_fp32)});
  if (scale == 0) {
    ImGui::TextDisabled("waiting for the trainers...");
    return;
  }
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  draw_legend(spacing, std::any_of(view.runs.begin(), view.runs.end(),
                                   [](const core::BackendRun& r) { return r.memory.attention_scores > 0; }));

  const std::vector<MemoryRow> rows = memory_rows(view);
  const bool any_16bit = std::any_of(rows.begin(), rows.end(), [](const MemoryRow& r) { return r.fp32_row; });
  float label_width = 0, total_width = 0;
  for (const MemoryRow& r : rows) {
    // A backend's label is drawn as two items ("GPU" in its colour, then the precision).
    const float w = r.fp32_row ? ImGui::CalcTextSize(r.label.c_str()).x
                               : ImGui::CalcTextSize(backend_title(r.run->name)).x + spacing +
                                     ImGui::CalcTextSize(core::to_string(r.run->config.precision)).x;
    label_width = std::max(label_width, w);
    total_width = std::max(total_width, ImGui::CalcTextSize(r.total.c_str()).x);
  }
  const float avail = ImGui::GetContentRegionAvail().x;
  const float bar_width = std::max(1.0f, avail - label_width - total_width - 2 * spacing);
  for (const MemoryRow& r : rows) {
    const float x = ImGui::GetCursorScreenPos().x;
    if (r.fp32_row) {
      ImGui::TextDisabled("%s", r.label.c_str());
    } else {
      ImGui::PushStyleColor(ImGuiCol_Text, backend_color(r.run->name));
      ImGui::TextUnformatted(backend_title(r.run->name));
      ImGui::PopStyleColor();
      ImGui::SameLine();
      ImGui::TextUnformatted(core::to_string(r.run->config.precision));
    }
    ImGui::SameLine();
    ImGui::SetCursorScreenPos(ImVec2(x + label_width + spacing, ImGui::GetCursorScreenPos().y));
    draw_bar(*r.memory, scale, bar_width, r.total);
  }
  if (!any_16bit)  // whole words on up to two lines, else shortened with an ellipsis, never clipped mid-word
    text_lines("fp16 or bf16 (Controls) adds the fp32 comparison", 2, ImGui::GetColorU32(ImGuiCol_TextDisabled));

  const std::string dataset = dataset_text(view);
  if (!dataset.empty()) text_lines(fmt::format("dataset copy: {}", dataset), 2);
}

}  // namespace ui
