// The dashboard's data model (Tracy's Worker beside its View): what the panels read for one frame. It turns the
// session's snapshots into plot series incrementally (only new steps are appended each frame) and holds the
// per-frame view that every panel's draw() gets.
#pragma once
#include <imgui.h>

#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"
#include "core/peaks.hpp"
#include "run/live_sweep.hpp"
#include "ui/lesson_claim.hpp"
#include "ui/plot_math.hpp"

namespace ui {

// The two colours of the race, on dark and light backgrounds alike (orange/blue: distinguishable with the common
// colour-vision deficiencies).
inline constexpr ImU32 kGpuColor = IM_COL32(255, 140, 30, 255);
inline constexpr ImU32 kCpuColor = IM_COL32(40, 140, 255, 255);
ImU32 backend_color(const std::string& backend);
const char* backend_title(const std::string& backend);  // "GPU" | "CPU"

// One backend's plot series, appended to as its run grows.
struct BackendSeries {
  Series loss_by_step;          // x: step (from 1), y: training loss of that step
  Series loss_by_seconds;       // x: training seconds, y: training loss
  Series accuracy_by_epoch;     // x: epoch, y: test accuracy (%)
  Series accuracy_by_seconds;   // x: training seconds at the epoch's end, y: test accuracy (%)
  size_t steps_seen = 0;
  size_t epochs_seen = 0;
};

class DashboardModel {
 public:
  // Appends what is new in `runs` (a Reset, seen as a shorter history, starts the series again).
  void update(const std::vector<core::BackendRun>& runs);
  const BackendSeries* series(const std::string& backend) const;

 private:
  std::map<std::string, BackendSeries> series_;
};

// Everything one frame shows. `runs` in the order of the session's backends.
struct DashboardView {
  std::vector<core::BackendRun> runs;
  const DashboardModel* model = nullptr;
  // The settings the controls show: run::Session::settings() while training (what a Reset restarts with; a backend
  // whose BackendRun::config differs has the difference pending), the run's own config for a finished run's picture.
  core::TrainConfig config;
  bool pause_requested = false;  // the last Pause / Resume asked for a pause (the backends say when they are)
  std::string session_status;   // the session's own message (a reset being prepared or refused)
  bool live = false;            // a running session (controls enabled); false for a finished run's screenshot
  double now_s = 0;             // core::monotonic_seconds() of this frame; 0: no ages shown (a finished run)
  double ui_frame_ms = 0;       // the UI's own frame time
  double ui_frame_p95_ms = 0;
  std::string caption;          // a lesson's caption, shown large in a band under the header ("" for none)
  std::string caption_hint;     // the teacher's hint beside it ("3/9 · Space: next"; "" for none)
  std::string caption_reserve;  // the lesson's longest caption: the band is as tall as it needs, all lesson long
  // A lesson's summary slide ("What we saw today"): shown in the body instead of the plots and views.
  bool summary_shown = false;
  std::vector<LessonSummaryRow> summary;
  std::string summary_title;    // the lesson's title
  // The Sweep tab's batch-size sweep, as the controller runs it (app::DashboardSweep).
  bool sweep_busy = false;      // asked for or running (a lesson waits for its end)
  std::string sweep_status;     // its run::LiveSweepState::status ("done", "stopped", "failed: ..."; "" never run)
  run::LiveSweepState sweep;    // its points so far, its status and progress
  std::string sweep_saved;      // the last Save's message (where the files went, or why not); "" before any
  // The measured peaks of the runs' devices (run::SessionPeaks; the cache for a finished run's picture): the
  // bandwidth shares and the rooflines. While peaks_measuring, training is paused for a measurement.
  std::vector<core::BackendPeaks> peaks;
  double load = -1;             // the machine's load for the footer (-1: read it now, core::load_average)
  bool fair = false;            // the fair mode: the backends take turns, each timed alone (run::Session::fair)
  double window_cores = -1;     // the window's own CPU use over the last seconds, in cores (-1: not measured)
  bool peaks_measuring = false;
  bool peaks_training_between = false;  // measuring between turns: training runs now, between two figures
  std::string peaks_stage;    // what is being measured ("gpu: fp32 FMA: vec4")
  std::string peaks_message;  // the last measurement's outcome, "" before any

  const core::BackendRun* run(const std::string& backend) const;
  const core::BackendPeaks* peaks_of(const std::string& backend) const;  // null when the view has none
  // The roofline ceilings of `run`'s device at its thread count (core::roof_ceilings); zeros without peaks.
  core::RoofCeilings roof(const core::BackendRun& run) const;
  // Seconds since `run`'s figures were brought up to date; 0 when unknown (no clock, or nothing measured yet).
  double age(const core::BackendRun& run) const;
};

// Figures older than this show their age.
inline constexpr double kStaleSeconds = 2.0;

// What `run` has pending against the settings `shown` (what it does not run yet), in words, e.g. "batch 512, fp16";
// "" when it runs them. The CPU threads count only for the CPU backend.
std::string pending_changes(const core::BackendRun& run, const core::TrainConfig& shown);

// The first training seconds at which `run`'s loss, averaged over `window` steps, is <= target; < 0 if never.
double time_to_loss(const core::BackendRun& run, double target, int window = 20);

}  // namespace ui
