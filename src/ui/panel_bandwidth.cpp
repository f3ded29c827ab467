// The memory bandwidth panel.
#include "ui/panel_bandwidth.hpp"

#include <fmt/format.h>

#include "ui/text_fit.hpp"

namespace ui {

void MemoryBandwidth::draw(const DashboardView& view) {
  std::vector<std::string> peaks = {"% of the measured peak:"};
  for (const auto& run : view.runs)
    peaks.push_back(run.peak_gbps > 0 ? fmt::format("{} {:.1f} GB/s", backend_title(run.name), run.peak_gbps)
                                      : fmt::format("{} measuring", backend_title(run.name)));
  const float help = ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x;
  text_line(fit_pieces(peaks, ImGui::GetContentRegionAvail().x - help, "  "), ImGui::GetColorU32(ImGuiCol_TextDisabled),
            ImGui::GetContentRegionAvail().x - help);
  ImGui::SameLine();
  help_marker("Bars: each kernel's achieved bandwidth (compulsory bytes / measured time) as a share of the device's "
              "peak, which trainscope measures at start-up with a 64 MiB buffer copy (main memory) timed like the "
              "kernels. Element-wise kernels (act_backward, adamw_update) are memory-bound: they come close to the "
              "peak. Above 100%: the kernel's data fit in the caches, which are faster than main memory. Matrix "
              "multiplications are compute-bound: their GB/s stays low.");
  kernel_bar_table(
      "bandwidth_bars", view, [](const core::BackendRun& run) { return std::string(backend_title(run.name)); },
      [](const core::BackendRun& run, const std::string& name) {
        KernelBar b;
        for (const auto& r : run.kernels.rows()) {
          if (r.name != name) continue;
          const double share = run.peak_gbps > 0 ? r.gbps / run.peak_gbps : 0;
          b.present = true;
          b.fraction = static_cast<float>(share);
          b.text = fmt::format("{:.0f}%", 100 * share);
          b.detail = fmt::format("{:.2f} GB/s", r.gbps);
        }
        return b;
      });
}

}  // namespace ui
