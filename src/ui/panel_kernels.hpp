// Kernel timings: where a step's time goes, one row per kernel with a bar per backend (its share of the step); the
// speed of each precision the run went through (PrecisionSpeeds); and per backend the full table (kernel, calls,
// ms/call, % of step, GFLOP/s, GB/s). Timings since the last change of batch size, optimizer, threads or precision
// (the first step after it left out as warm-up). When the three do not fit the panel's height, a selector shows one
// at a time; tables drop their least important columns rather than get wider than the panel.
#pragma once
#include "ui/panel.hpp"
#include "ui/panel_precision.hpp"

namespace ui {

struct KernelTimings {
  enum class Part { Bars, Precisions, Tables };
  Part part = Part::Bars;  // which one is shown when they do not all fit

  void draw(const DashboardView& view);

 private:
  PrecisionSpeeds precisions_;
  void draw_bars(const DashboardView& view);
  static std::string attention_traffic(const DashboardView& view);  // "" without attention in the runs
  static void draw_attention_traffic(const std::string& text);
  void draw_table(const core::BackendRun& run, const char* id);
};

}  // namespace ui
