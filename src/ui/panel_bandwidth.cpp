// The memory bandwidth panel.
#include "ui/panel_bandwidth.hpp"

#include <fmt/format.h>

#include "ui/panel_peaks.hpp"
#include "ui/text_fit.hpp"

namespace ui {

void MemoryBandwidth::draw(const DashboardView& view, Controller* controller) {
  bool over = false;  // a bar above 100% of the memory ceiling: said under the bars, not only in a tooltip
  draw_peaks_row(view, controller, "% of peak:", "bandwidth",
                 "Bars: each kernel's achieved bandwidth (compulsory bytes / measured time) as a share of the "
                 "device's measured memory ceiling. Element-wise kernels (act_backward, adamw_update) are "
                 "memory-bound: they come close to the peak. Above 100%: the kernel's data fit in the caches, which "
                 "are faster than main memory. Matrix multiplications are compute-bound: their GB/s stays low.");
  kernel_bar_table(
      "bandwidth_bars", view, [](const core::BackendRun& run) { return std::string(backend_title(run.name)); },
      [&view, &over](const core::BackendRun& run, const std::string& name) {
        KernelBar b;
        const double peak = view.roof(run).bandwidth_gbps;
        for (const auto& r : run.kernels.rows()) {
          if (r.name != name) continue;
          b.present = true;
          b.detail = fmt::format("{:.2f} GB/s", r.gbps);
          if (name == core::PlanEntry::kUploadBatch) {  // --input host: a transfer, not a share of memory's peak
            b.text = "host to device";
            b.tooltip = fmt::format("upload_batch: the batch copied from the host's staging memory to the device, "
                                    "{:.2f} GB/s: a host-to-device transfer (over PCIe on a real GPU), not a kernel, "
                                    "so the device memory's ceiling does not apply.",
                                    r.gbps);
            continue;
          }
          if (peak <= 0) {
            b.text = "no peak";
            continue;
          }
          const double share = r.gbps / peak;
          b.fraction = static_cast<float>(share);
          // Above 100%: marked "*" (a word did not fit a projector's cell: "337% cache" showed as "337%..."), and
          // said once under the bars.
          b.text = fmt::format("{:.0f}%{}", 100 * share, share > 1 ? "*" : "");
          over = over || share > 1;
          b.tooltip = fmt::format("{}: {:.2f} GB/s = {:.0f}% of the measured memory ceiling ({:.2f} GB/s, {}).", name,
                                  r.gbps, 100 * share, peak, view.roof(run).bandwidth_from);
          if (share > 1)
            b.tooltip += "\n\nAbove 100%: the ceiling is main memory's, measured on buffers far larger than the "
                         "caches. This kernel's data (a layer's activations, a bias) fit in the caches, which are "
                         "faster than main memory, so it moved its bytes faster than memory alone could. The bytes "
                         "are the compulsory ones (each tensor read or written once).";
        }
        return b;
      });
  if (over)
    text_lines("* above 100%: from cache, not memory (the ceiling is main memory's)", 2);
}

}  // namespace ui
