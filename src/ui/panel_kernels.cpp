// The kernel timings panel.
#include "ui/panel_kernels.hpp"

#include <fmt/format.h>

#include "ui/style.hpp"

namespace ui {

static void backend_heading(const core::BackendRun& run) {
  ImGui::PushStyleColor(ImGuiCol_Text, backend_color(run.name));
  ImGui::TextUnformatted(backend_title(run.name));
  ImGui::PopStyleColor();
  ImGui::SameLine();
  ImGui::Text("step %.3g ms, batch %d", run.kernels.mean_step_ms(), run.config.batch);
}

void KernelTimings::draw_bars(const core::BackendRun& run) {
  backend_heading(run);
  const auto rows = run.kernels.rows();
  if (rows.empty()) {
    ImGui::TextDisabled("waiting for timed steps...");
    return;
  }
  for (const auto& r : rows)
    bar(static_cast<float>(r.pct_of_step / 100.0), backend_color(run.name),
        fmt::format("{}  {:.1f}%", r.name, r.pct_of_step));
}

void KernelTimings::draw_table(const core::BackendRun& run, const char* id) {
  const auto rows = run.kernels.rows();
  if (rows.empty()) return;
  ImGui::Spacing();
  backend_heading(run);
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", run.name == "gpu" ? "Vulkan timestamp queries" : "wall clock");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (fonts().mono) ImGui::PushFont(fonts().mono);
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(ImGui::GetFontSize() * 0.2f, 1.0f));
  if (ImGui::BeginTable(id, 6, flags)) {
    for (const char* h : {"kernel", "calls", "ms/call", "% step", "GFLOP/s", "GB/s"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    auto row = [](const core::KernelRow& r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%ld", r.calls);
      ImGui::TableNextColumn();
      ImGui::Text(r.mean_ms >= 10 ? "%.1f" : (r.mean_ms >= 0.1 ? "%.3f" : "%.4f"), r.mean_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", r.pct_of_step);
      ImGui::TableNextColumn();
      if (r.gflops > 0)
        ImGui::Text(r.gflops >= 10 ? "%.1f" : "%.2f", r.gflops);
      else
        ImGui::TextUnformatted("-");
      ImGui::TableNextColumn();
      ImGui::Text(r.gbps >= 10 ? "%.1f" : "%.2f", r.gbps);
    };
    for (const auto& r : rows) row(r);
    core::KernelRow total = run.kernels.step_row();
    total.name = "step (total)";
    row(total);
    ImGui::EndTable();
  }
  ImGui::PopStyleVar();
  if (fonts().mono) ImGui::PopFont();
}

void KernelTimings::draw(const DashboardView& view) {
  ImGui::Checkbox("table", &show_table);
  ImGui::SameLine();
  help_marker("GFLOP/s = the step plan's analytic FLOPs / measured time. GB/s = compulsory bytes (each tensor read "
              "or written once) / measured time: a lower bound of the real traffic. GPU times come from Vulkan "
              "timestamp queries between dispatches, CPU times from the wall clock around each kernel.");
  const int n = static_cast<int>(view.runs.size());
  if (n == 0) return;
  // Where the time goes, GPU and CPU next to each other; then the full tables, one under the other.
  if (ImGui::BeginTable("kernels_side_by_side", n, ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextRow();
    for (const auto& run : view.runs) {
      ImGui::TableNextColumn();
      draw_bars(run);
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  precisions_.draw(view);
  if (!show_table) return;
  for (int i = 0; i < n; ++i) draw_table(view.runs[static_cast<size_t>(i)], fmt::format("kernels_{}", i).c_str());
}

}  // namespace ui
