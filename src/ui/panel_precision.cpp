// The per-precision speed table.
#include "ui/panel_precision.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ui/style.hpp"

namespace ui {

std::vector<PrecisionSpeedRow> precision_speed_rows(const DashboardView& view) {
  std::vector<PrecisionSpeedRow> rows;
  for (const auto& run : view.runs) {
    const size_t first = rows.size();
    for (const auto& r : run.precisions) {
      if (r.steps <= 0) continue;
      rows.push_back({&run, &r, r.precision == run.config.precision && r.batch == run.config.batch});
    }
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end(), [](const auto& a, const auto& b) {
      if (a.row->precision != b.row->precision) return a.row->precision < b.row->precision;
      return a.row->batch < b.row->batch;
    });
  }
  return rows;
}

void PrecisionSpeeds::draw(const DashboardView& view) {
  ImGui::TextUnformatted("Speed per precision");
  ImGui::SameLine();
  help_marker("One row per precision and batch size this run has trained with (the first step after each change "
              "left out as warm-up); the row in force now is highlighted. 16-bit storage halves the bytes most "
              "kernels move, so memory-bound steps get faster; the arithmetic stays fp32. skipped: fp16 steps whose "
              "gradients overflowed, so the optimizer update was skipped and the loss scale lowered.");
  const auto rows = precision_speed_rows(view);
  if (rows.empty()) {
    ImGui::TextDisabled("waiting for timed steps...");
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (fonts().mono) ImGui::PushFont(fonts().mono);
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(ImGui::GetFontSize() * 0.2f, 1.0f));
  // Its own horizontal scrollbar when the column is narrower than the table (1024-pixel windows), so that no
  // column is squeezed into "sam..."; the headers are the widest cells of every column but the first two.
  static constexpr const char* kHeaders[] = {"", "prec.", "batch", "steps", "ms/step", "GB/s", "GFLOP/s", "samples/s",
                                             "skipped"};
  float needed = ImGui::CalcTextSize("GPU").x;
  for (const char* h : kHeaders) needed += ImGui::CalcTextSize(h).x + 2 * ImGui::GetFontSize() * 0.2f + 1;
  const bool scroll = ImGui::GetContentRegionAvail().x < needed;
  const float height = static_cast<float>(rows.size() + 1) * (ImGui::GetTextLineHeight() + 2.0f) +
                       ImGui::GetStyle().ScrollbarSize + 4.0f;
  if (ImGui::BeginTable("precision_speeds", 9, scroll ? flags | ImGuiTableFlags_ScrollX : flags,
                        ImVec2(0, scroll ? height : 0))) {
    for (const char* h : kHeaders) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const ImU32 highlight = ImGui::GetColorU32(ImGuiCol_Header);
    for (const auto& row : rows) {
      const core::PrecisionRow& r = *row.row;
      ImGui::TableNextRow();
      if (row.current) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlight);
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, backend_color(row.run->name));
      ImGui::TextUnformatted(backend_title(row.run->name));
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(core::to_string(r.precision));
      ImGui::TableNextColumn();
      ImGui::Text("%d", r.batch);
      ImGui::TableNextColumn();
      ImGui::Text("%ld", r.steps);
      ImGui::TableNextColumn();
      const double ms = r.mean_step_ms();
      ImGui::Text(ms >= 100 ? "%.0f" : (ms >= 1 ? "%.2f" : "%.3f"), ms);
      ImGui::TableNextColumn();
      ImGui::Text(r.gbps() >= 10 ? "%.1f" : "%.2f", r.gbps());
      ImGui::TableNextColumn();
      ImGui::Text(r.gflops() >= 10 ? "%.1f" : "%.2f", r.gflops());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_rate(r.samples_per_s()).c_str());
      ImGui::TableNextColumn();
      if (r.precision == core::Precision::FP16 || r.skipped > 0)  // only fp16 has a loss scale to overflow
        ImGui::Text("%ld", r.skipped);
      else
        ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
  }
  ImGui::PopStyleVar();
  if (fonts().mono) ImGui::PopFont();
}

}  // namespace ui
