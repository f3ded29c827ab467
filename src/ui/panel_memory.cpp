// The memory panel.
#include "ui/panel_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ui {

// Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); master weights a darker shade of
// the weights' blue, since they are the same parameters kept in fp32.
std::vector<MemorySegment> memory_segments(const core::MemoryUsage& m) {
  return {{"weights", m.weights, IM_COL32(86, 180, 233, 255)},
          {"master weights", m.master_weights, IM_COL32(0, 114, 178, 255)},
          {"gradients", m.gradients, IM_COL32(213, 94, 0, 255)},
          {"optimizer state", m.optimizer_state, IM_COL32(204, 121, 167, 255)},
          {"activations", m.activations, IM_COL32(0, 158, 115, 255)},
          {"workspace", m.workspace, IM_COL32(160, 160, 160, 255)}};
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

}  // namespace

void MemoryPanel::draw_bar(const char* label, float label_width, const core::MemoryUsage& m, size_t scale_bytes,
                           float bar_width) {
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float h = ImGui::GetTextLineHeight();
  const float x_start = ImGui::GetCursorScreenPos().x;
  if (label_width > 0) {
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
    ImGui::SetCursorScreenPos(ImVec2(x_start + label_width + spacing, ImGui::GetCursorScreenPos().y));
  }
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const auto segments = memory_segments(m);
  const auto spans = segment_spans(segments, scale_bytes, p.x, bar_width);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const size_t total = bar_total(m);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].bytes == 0) continue;
    // At least one pixel, so that a small but present category is seen (its hover gives the size).
    const float x1 = std::max(spans[i].x1, spans[i].x0 + 1.0f);
    dl->AddRectFilled(ImVec2(spans[i].x0, p.y), ImVec2(x1, p.y + h), segments[i].color);
    if (ImGui::IsMouseHoveringRect(ImVec2(spans[i].x0, p.y), ImVec2(x1, p.y + h)))
      ImGui::SetTooltip("%s: %s (%.0f%% of this bar)", segments[i].label, format_bytes(segments[i].bytes).c_str(),
                        total > 0 ? 100.0 * static_cast<double>(segments[i].bytes) / static_cast<double>(total) : 0.0);
  }
  ImGui::Dummy(ImVec2(spans.empty() ? 0 : spans.back().x1 - p.x, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(format_bytes(total).c_str());
}

void MemoryPanel::draw(const DashboardView& view) {
  ImGui::TextDisabled("training memory, dataset apart");
  ImGui::SameLine();
  help_marker("The bytes each trainer allocated, by category. With 16-bit storage (fp16 / bf16) the weights the "
              "kernels read, the gradients and the activations take half the bytes; the optimizer still updates fp32 "
              "master weights and keeps its state in fp32, so the model shrinks by less than half. Activations grow "
              "with the batch size. The lower bar is the same model with every tensor in fp32, on the same scale.");
  // One scale for every bar: the largest of them fills the width.
  size_t scale = 0;
  for (const auto& run : view.runs) scale = std::max({scale, bar_total(run.memory), bar_total(run.memory_fp32)});
  if (scale == 0) {
    ImGui::TextDisabled("waiting for the trainers...");
    return;
  }
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  float label_width = 0, total_width = 0;
  for (const auto& run : view.runs) {
    const std::string now = fmt::format("now ({})", core::to_string(run.config.precision));
    label_width = std::max(label_width, ImGui::CalcTextSize(now.c_str()).x);
    total_width = std::max({total_width, ImGui::CalcTextSize(format_bytes(bar_total(run.memory)).c_str()).x,
                            ImGui::CalcTextSize(format_bytes(bar_total(run.memory_fp32)).c_str()).x});
  }
  label_width = std::max(label_width, ImGui::CalcTextSize("same model in fp32").x);
  // Legend: one colour per category, wrapped to the panel's width.
  const float box = ImGui::GetTextLineHeight() * 0.8f;
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  bool first = true;
  for (const auto& s : memory_segments(core::MemoryUsage{})) {
    const float w = box + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(s.label).x;
    if (!first) {
      ImGui::SameLine(0, spacing * 2);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float y = p.y + (ImGui::GetTextLineHeight() - box) * 0.5f;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + box, y + box), s.color);
    ImGui::Dummy(ImVec2(box, ImGui::GetTextLineHeight()));
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::TextUnformatted(s.label);
  }

  const float avail = ImGui::GetContentRegionAvail().x;
  // Narrow column: each label on its own line above its bar, so the bars keep a readable length.
  const bool stacked = avail - label_width - total_width - 2 * spacing < 8 * ImGui::GetFontSize();
  if (stacked) label_width = 0;
  const float bar_width = std::max(1.0f, avail - (stacked ? 0 : label_width + spacing) - total_width - spacing);

  for (const auto& run : view.runs) {
    ImGui::PushStyleColor(ImGuiCol_Text, backend_color(run.name));
    ImGui::TextUnformatted(backend_title(run.name));
    ImGui::PopStyleColor();
    ImGui::SameLine();
    const size_t now = bar_total(run.memory), fp32 = bar_total(run.memory_fp32);
    const char* precision = core::to_string(run.config.precision);
    if (now == 0) {
      ImGui::TextDisabled("creating the trainer...");
      continue;
    }
    const bool compare = run.config.precision != core::Precision::FP32 || run.memory != run.memory_fp32;
    const double change = fp32 > 0 ? (static_cast<double>(now) - static_cast<double>(fp32)) / static_cast<double>(fp32) : 0;
    // More is possible: the CPU widens 16-bit operands into an fp32 workspace for its kernels.
    if (compare && std::abs(change) >= 0.005)
      ImGui::TextWrapped("%s: %.0f%% %s memory than fp32", precision, 100.0 * std::abs(change),
                         change < 0 ? "less" : "more");
    else if (compare)
      ImGui::Text("%s: about the same as fp32", precision);
    else
      ImGui::TextUnformatted(precision);
    const std::string now_label = fmt::format("now ({})", precision);
    if (stacked) ImGui::TextUnformatted(now_label.c_str());
    draw_bar(now_label.c_str(), label_width, run.memory, scale, bar_width);
    if (compare) {
      if (stacked) ImGui::TextUnformatted("same model in fp32");
      draw_bar("same model in fp32", label_width, run.memory_fp32, scale, bar_width);
    } else {
      ImGui::TextDisabled("switch to fp16 or bf16 (Controls) to compare");
    }
  }

  // The dataset, in words: on the GPU a copy of both splits, on the CPU none (its kernels read the loaded data).
  std::string dataset;
  for (const auto& run : view.runs) {
    if (run.memory.total() == 0) continue;
    dataset += fmt::format("{}{} {}", dataset.empty() ? "" : ", ", backend_title(run.name),
                           run.memory.dataset > 0 ? format_bytes(run.memory.dataset) : "none (reads it in place)");
  }
  if (!dataset.empty()) ImGui::TextWrapped("Dataset copy, not in the bars: %s.", dataset.c_str());
}

}  // namespace ui
