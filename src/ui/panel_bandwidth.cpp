// The memory bandwidth panel.
#include "ui/panel_bandwidth.hpp"

#include <fmt/format.h>

namespace ui {

void MemoryBandwidth::draw(const DashboardView& view) {
  ImGui::TextDisabled("%s", "each kernel's GB/s, as % of the measured peak");
  ImGui::SameLine();
  help_marker("Bars: each kernel's achieved bandwidth (compulsory bytes / measured time) as a share of the device's "
              "peak, which trainscope measures at start-up with a 64 MiB buffer copy (main memory) timed like the "
              "kernels. Element-wise kernels (act_backward, adamw_update) are memory-bound: they come close to the "
              "peak. Above 100%: the kernel's data fit in the caches, which are faster than main memory. Matrix "
              "multiplications are compute-bound: their GB/s stays low.");
  for (const auto& run : view.runs) {
    ImGui::PushStyleColor(ImGuiCol_Text, backend_color(run.name));
    ImGui::TextUnformatted(backend_title(run.name));
    ImGui::PopStyleColor();
    ImGui::SameLine();
    if (run.peak_gbps > 0)
      ImGui::Text("peak %.1f GB/s (measured copy)", run.peak_gbps);
    else
      ImGui::TextDisabled("measuring peak...");
    for (const auto& r : run.kernels.rows()) {
      const double share = run.peak_gbps > 0 ? r.gbps / run.peak_gbps : 0;
      bar(static_cast<float>(share), backend_color(run.name),
          fmt::format("{}  {:.2f} GB/s  {:.0f}%", r.name, r.gbps, 100 * share), ImGui::GetFontSize() * 1.05f);
    }
  }
}

}  // namespace ui
