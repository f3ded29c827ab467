// The race header: per backend its device, samples/s, steps, epoch, loss, test accuracy, and one line of state (the
// settings it runs, a change being applied with its stage, what is pending, paused, finished, stopped) with the age
// of its figures when they are older than 2 s; between them the speedup (GPU ÷ CPU samples/s) in large type, or "-"
// with the reason when there is no honest figure (core::live_speedup): greyed with the figures' age while paused,
// the race's result over whole epochs once both finished ("loss 0.50 reached: CPU 12 s, GPU 40 s"), and "taking
// turns" when the fair mode times each backend alone. Always the same number of lines (the layout's header_lines),
// each shortened to its column, so that nothing below ever moves.
#pragma once
#include "ui/figure_text.hpp"
#include "ui/panel.hpp"

namespace ui {

struct RaceHeader {
  // `lines`: 2..4 lines of text (the layout decides from the window and font sizes). target_loss: the loss the race
  // result names once both backends finished (the loss panel's target).
  void draw(const DashboardView& view, int lines, float target_loss = 0.5f);
  // The device names as the last draw() showed them, left to right (none with fewer than 3 lines).
  const std::vector<std::string>& drawn_devices() const { return devices_; }

 private:
  std::vector<std::string> devices_;
  void draw_backend(const DashboardView& view, const core::BackendRun& run, int lines);
  void draw_speedup(const DashboardView& view, int lines, float target_loss);
};

// The backend's state line of the header, e.g. "fp32 · batch 128 · adamw", "applying batch 128 -> 512: saving the
// state (3 s)", "pending: batch 512", "paused", with "figures 5 s old · " in front when they are stale (with_age).
std::string backend_state_line(const DashboardView& view, const core::BackendRun& run, bool with_age = true);

// The backend's samples/s as its header line says it: the rate over its last run::kSteadySeconds of training
// (BackendRun::recent_samples_per_s); for a finished run, the rate over its whole epochs (BackendRun::samples_per_s),
// the figure the finished race's speedup divides, "9449 samples/s over the run"; "measuring samples/s" while a
// running backend has no steady rate yet, "no samples/s: " and BackendRun::rate_note when none can come (steps that
// outlast the turns), "samples/s not measured (too few steps)" for a finished one without either.
std::string rate_text(const core::BackendRun& run);

// `device` as shown in `width` pixels of the current font: whole when it fits; else without its details in
// parentheses and with its bracketed label shortened ("llvmpipe [software Vulkan]"); else the name cut with an
// ellipsis before the label, which stays whole ("llvm… [software Vulkan]") as long as it fits at all.
std::string fit_device(const std::string& device, float width);

}  // namespace ui
