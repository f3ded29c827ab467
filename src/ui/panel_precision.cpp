// The per-precision speed table.
#include "ui/panel_precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

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

namespace {

// The table's columns; Columns: which of them are drawn.
constexpr const char* kHeaders[] = {"", "prec.", "batch", "steps", "ms/step", "GB/s", "GFLOP/s", "samples/s",
                                    "skipped"};
using Columns = std::array<bool, std::size(kHeaders)>;

// Never wider than the panel (no sideways scrolling): the least important columns go first when it is narrow.
// "skipped" only where a run trained in fp16.
Columns kept_columns(const std::vector<PrecisionSpeedRow>& rows, float pad) {
  Columns keep;
  keep.fill(true);
  bool any_fp16 = false;
  for (const auto& row : rows) any_fp16 = any_fp16 || row.row->precision == core::Precision::FP16;
  keep[8] = any_fp16;
  const float avail = ImGui::GetContentRegionAvail().x;
  auto needed = [&] {
    float w = ImGui::CalcTextSize("GPU").x;
    for (int c = 1; c < 9; ++c)
      if (keep[c]) w += std::max(ImGui::CalcTextSize(kHeaders[c]).x, ImGui::CalcTextSize("00000").x) + 2 * pad + 1;
    return w;
  };
  for (int drop : {8, 3, 6, 5})
    if (needed() > avail) keep[drop] = false;
  return keep;
}

// One row of the table, the row in force highlighted.
void draw_row(const PrecisionSpeedRow& row, const Columns& keep) {
  const core::PrecisionRow& r = *row.row;
  ImGui::TableNextRow();
  if (row.current) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, ImGui::GetColorU32(ImGuiCol_Header));
  ImGui::TableNextColumn();
  ImGui::PushStyleColor(ImGuiCol_Text, backend_color(row.run->name));
  ImGui::TextUnformatted(backend_title(row.run->name));
  ImGui::PopStyleColor();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(core::to_string(r.precision));
  ImGui::TableNextColumn();
  ImGui::Text("%d", r.batch);
  if (keep[3]) {
    ImGui::TableNextColumn();
    ImGui::Text("%ld", r.steps);
  }
  ImGui::TableNextColumn();
  const double ms = r.mean_step_ms();
  ImGui::Text(ms >= 100 ? "%.0f" : (ms >= 1 ? "%.2f" : "%.3f"), ms);
  if (keep[5]) {
    ImGui::TableNextColumn();
    ImGui::Text(r.gbps() >= 10 ? "%.1f" : "%.2f", r.gbps());
  }
  if (keep[6]) {
    ImGui::TableNextColumn();
    ImGui::Text(r.gflops() >= 10 ? "%.1f" : "%.2f", r.gflops());
  }
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(format_rate(r.samples_per_s()).c_str());
  if (keep[8]) {
    ImGui::TableNextColumn();
    if (r.precision == core::Precision::FP16 || r.skipped > 0)  // only fp16 has a loss scale to overflow
      ImGui::Text("%ld", r.skipped);
    else
      ImGui::TextDisabled("-");
  }
}

}  // namespace

void PrecisionSpeeds::draw(const DashboardView& view) {
  ImGui::TextUnformatted("Speed per precision");
  ImGui::SameLine();
  help_marker("One row per precision and batch size this run has trained with (the first step after each change "
              "left out as warm-up); the row in force now is highlighted. 16-bit storage halves the bytes most "
              "kernels move, so memory-bound steps get faster; the arithmetic stays fp32. skipped: fp16 steps whose "
              "gradients overflowed, so the optimizer update was skipped and the loss scale lowered.\n\n"
              "Faster or slower in 16 bits? Both backends multiply and add in fp32 (trainscope uses no 16-bit "
              "arithmetic units), so 16 bits save bytes while every value is converted on its way in and out: the "
              "saved bytes can win where memory sets the pace, the conversions can lose where arithmetic does. The "
              "rows above are what this machine measured. GPUs with tensor cores multiply 16-bit numbers many times "
              "faster than fp32.");
  const auto rows = precision_speed_rows(view);
  if (rows.empty()) {
    ImGui::TextDisabled("waiting for timed steps...");
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (fonts().mono) ImGui::PushFont(fonts().mono);
  const float pad = ImGui::GetFontSize() * 0.2f;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(pad, 1.0f));
  const Columns keep = kept_columns(rows, pad);
  int columns = 0;
  for (bool k : keep) columns += k ? 1 : 0;
  if (ImGui::BeginTable("precision_speeds", columns, flags)) {
    for (int c = 0; c < 9; ++c)
      if (keep[c]) ImGui::TableSetupColumn(kHeaders[c]);
    ImGui::TableHeadersRow();
    for (const auto& row : rows) draw_row(row, keep);
    ImGui::EndTable();
  }
  ImGui::PopStyleVar();
  if (fonts().mono) ImGui::PopFont();
}

}  // namespace ui
