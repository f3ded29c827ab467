// Kernel timings: for each backend a table (kernel, calls, mean ms, % of step, GFLOP/s, GB/s) and horizontal bars of
// each kernel's share of a step, GPU and CPU next to each other. Timings since the last change of batch size,
// optimizer or threads (the first step after it left out as warm-up). Between the bars and the tables, the speed of
// each precision the run went through (PrecisionSpeeds).
#pragma once
#include "ui/panel.hpp"
#include "ui/panel_precision.hpp"

namespace ui {

struct KernelTimings {
  bool show_table = true;

  void draw(const DashboardView& view);

 private:
  PrecisionSpeeds precisions_;
  void draw_bars(const core::BackendRun& run);
  void draw_table(const core::BackendRun& run, const char* id);
};

}  // namespace ui
