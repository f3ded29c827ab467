// The Timeline tab: the last few steps of each backend on tracks, as a profiler shows them (run::Worker's
// TimelineRecorder, BackendRun::timeline): the GPU queue with every dispatch from its timestamps and the host's record,
// submit, fence wait and read-back; the CPU pool's threads with each kernel's span. Gaps between spans are what the
// kernels did not use. Under each backend a breakdown bar splits its step time into kernel time and overhead (step
// time / summed kernel times). Wheel zooms about the cursor, drag pans, double-click shows the whole window again.
// Buttons export the trace (Chrome trace JSON for Perfetto) and the CSV tables through the Controller.
#pragma once
#include <map>
#include <string>

#include "ui/panel.hpp"
#include "ui/plot_math.hpp"

namespace ui {

struct TimelinePanel {
  // controller: null for a finished run's picture (no export buttons).
  void draw(const DashboardView& view, Controller* controller);

 private:
  void draw_backend(const core::BackendRun& run, float lane_height);
  std::map<std::string, Range> zoom_;  // per backend: the shown part of its window, as fractions 0..1
  std::string export_message_;         // the last export's outcome
};

}  // namespace ui
