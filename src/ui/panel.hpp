// What the panels share: the controller they send the user's changes to, and small drawing helpers.
#pragma once
#include <imgui.h>

#include <functional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "run/command.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/style.hpp"

namespace ui {

// Where the controls send what the user changes. The dashboard app implements it over a run::Session; a finished
// run's screenshot has none (controls are shown disabled).
class Controller {
 public:
  virtual ~Controller() = default;
  virtual void post(const run::Command& command) = 0;      // applied by every backend between its steps
  virtual void reset(const core::TrainConfig& config) = 0;  // new model / dataset: training starts again
  virtual void request_screenshot() = 0;
  virtual void set_style(const StyleOptions& style) = 0;  // applied between frames (the font atlas is rebuilt)
  virtual StyleOptions style() const = 0;
  // Pauses training, measures every device's peaks again (run::SessionPeaks), caches them, resumes.
  virtual void remeasure_peaks() = 0;
  // The exports of the Timeline tab, written atomically (core/files) to a new timestamped path under exports/: the
  // trace of each backend's last steps (core::write_trace: Chrome trace JSON for Perfetto) / the CSV tables
  // (core::write_csv_dir). Return what to tell the user: where it went, or why it failed. Never throw.
  virtual std::string export_trace() = 0;
  virtual std::string export_csv() = 0;
  // The fair mode (run::Session::set_fair): the backends take turns in time slices, each timed alone.
  virtual void set_fair(bool on) { (void)on; }
  // The Sweep tab's batch-size sweep (app::DashboardSweep): started with the settings shown at the next frame,
  // stopped, or its points saved beside the screenshots (DashboardView::sweep_saved says where).
  virtual void start_sweep() {}
  virtual void stop_sweep() {}
  virtual void save_sweep() {}
};

// "13 ms", "12.3 s", "4 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);
// "817", "66.1 k", "1.23 M" (samples/s and the like).
std::string format_rate(double value);

// The precision in force for `run`: "fp32", "bf16", or for fp16 with its dynamic loss scaling
// "fp16, loss scale 8192, 3 steps skipped" (the scale once a step has reported one).
std::string precision_text(const core::BackendRun& run);

// A horizontal bar of `fraction` (0..1) of the available width, `height` pixels, with `text` drawn on it (shortened
// with an ellipsis to the bar's width).
void bar(float fraction, ImU32 color, const std::string& text, float height = 0);

// The kernel names of the runs' timing tables, in plan order, the union over the backends (fp16 adds two kernels).
std::vector<std::string> kernel_names(const DashboardView& view);

// One bar of a kernel_bar_table: `fraction` of the cell, `text` on it, followed by `detail` when there is room;
// `present` false leaves the cell empty.
struct KernelBar {
  bool present = false;
  float fraction = 0;
  std::string text;
  std::string detail;
  std::string tooltip;  // shown when the bar is hovered ("" for none)
};

// A table with one row per kernel (kernel_names order): the name (shortened in the middle when the bars would get
// narrower than 5 font sizes), then one bar per run, coloured as its backend; `heading(run)` is each bar column's
// heading, `bar(run, name)` the bar. Every text is shortened to its cell: the table never gets wider than the panel.
void kernel_bar_table(const char* id, const DashboardView& view,
                      const std::function<std::string(const core::BackendRun&)>& heading,
                      const std::function<KernelBar(const core::BackendRun&, const std::string&)>& bar);

// A "(?)" marker with a wrapped tooltip.
void help_marker(const char* text);

}  // namespace ui
