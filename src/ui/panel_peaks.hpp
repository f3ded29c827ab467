// The measured peaks as the Bandwidth and Roofline tabs show them: one line with each backend's ceilings (hover: each
// figure's unit, method, when and at what load it was measured, cached or not), and a "Re-measure peaks" button that
// pauses training while the probes run (run::SessionPeaks). Without peaks it says so and what to press.
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

// `title` and each backend's ceilings of `kind` (ceiling_text), hover: what the ceilings are and every backend's
// peaks_tooltip.
void draw_peaks_line(const DashboardView& view, const std::string& title, const std::string& kind);

// The re-measure button and the measurement's stage or outcome ("not measured: press Re-measure peaks"). controller:
// null for a finished run's picture (then only a missing measurement is said).
void draw_remeasure_row(const DashboardView& view, Controller* controller);

}  // namespace ui
