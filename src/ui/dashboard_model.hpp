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
  core::TrainConfig config;
  std::string session_status;   // the session's own message (a reset being prepared or refused)
  bool live = false;            // a running session (controls enabled); false for a finished run's screenshot
  double ui_frame_ms = 0;       // the UI's own frame time
  double ui_frame_p95_ms = 0;

  const core::BackendRun* run(const std::string& backend) const;
};

// The first training seconds at which `run`'s loss, averaged over `window` steps, is <= target; < 0 if never.
double time_to_loss(const core::BackendRun& run, double target, int window = 20);

}  // namespace ui
