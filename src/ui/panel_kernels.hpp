// Kernel timings: for each backend a table (kernel, calls, mean ms, % of step, GFLOP/s, GB/s) and horizontal bars of
// each kernel's share of a step, GPU and CPU next to each other. Timings since the last change of batch size,
// optimizer or threads (the first step after it left out as warm-up).
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct KernelTimings {
  bool show_table = true;

  void draw(const DashboardView& view);

 private:
  void draw_bars(const core::BackendRun& run);
  void draw_table(const core::BackendRun& run, const char* id);
};

}  // namespace ui
