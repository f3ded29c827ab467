// The measured peaks as the Bandwidth and Roofline tabs show them: one line with each backend's ceilings (hover: each
// figure's unit, method, when and at what load it was measured, cached or not) after a "Re-measure" button that
// pauses training while the probes run (run::SessionPeaks). Without peaks it says "not measured".
#pragma once
#include <string>

#include "ui/panel.hpp"

namespace ui {

// What `kind` ("bandwidth" | "compute" | "both") of `backend`'s ceilings show: "GPU 19.2 GB/s", "CPU 444 GFLOP/s",
// "GPU not measured".
std::string ceiling_text(const DashboardView& view, const core::BackendRun& run, const std::string& kind);

// The tooltip of `run`'s peaks: the device, each ceiling with its figure's label, unit and method, and where the
// figures came from (cached / measured now, when, the load average then); or why there are none.
std::string peaks_tooltip(const DashboardView& view, const core::BackendRun& run);

// One row: the "Re-measure" button (controller: null for a finished run's picture, then no button), `title` and each
// backend's ceilings of `kind` (ceiling_text), shortened to the row; hover: `help`, what the ceilings are, the last
// measurement's outcome and every backend's peaks_tooltip. The measurement's progress also shows in the quick bar.
void draw_peaks_row(const DashboardView& view, Controller* controller, const std::string& title,
                    const std::string& kind, const std::string& help = "");

}  // namespace ui
