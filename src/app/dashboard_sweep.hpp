// app::DashboardSweep: the dashboard's batch-size sweep (run::LiveSweep), run by the controller: the Sweep tab and a
// lesson's "do": "sweep" post start, stop and save through ui::Controller; the tab draws the state the view carries
// (ui::DashboardView::sweep). Training is paused meanwhile and resumed after, unless it was paused before.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "run/live_sweep.hpp"
#include "ui/dashboard_model.hpp"

namespace app {

class DashboardSweep {
 public:
  // `post`: how the sweep's hooks pause and resume the training (the session's commands).
  explicit DashboardSweep(std::function<void(const run::Command&)> post) : post_(std::move(post)) {}
  void request_start() { start_requested_ = true; }  // at the next update()
  void stop() { sweep_.stop(); }
  // The finished sweep's points as `trainscope sweep --report` / `--csv` write them, beside the screenshots
  // (screenshots/trainscope-YYYYMMDD-HHMMSS-sweep.json and .csv); saved() then says where, or why not. Never throws.
  void save();
  // Every frame, before the view is drawn (`view`: this frame's, its sweep fields not yet filled): starts a requested
  // sweep with the settings the controls show, and resumes training after one has ended.
  void update(const ui::DashboardView& view);
  bool busy() const { return start_requested_ || sweep_.running(); }
  run::LiveSweepState state() const { return sweep_.state(); }
  const std::string& saved() const { return saved_; }

 private:
  void start(const ui::DashboardView& view);

  std::function<void(const run::Command&)> post_;
  // Every backend of the training is paused (or stopped), as the last frame saw it; read by the sweep thread.
  std::shared_ptr<std::atomic<bool>> training_paused_ = std::make_shared<std::atomic<bool>>(false);
  std::string saved_;  // the last save's message (where the files went, or why not)
  bool start_requested_ = false;
  run::LiveSweep sweep_;  // last: destroyed (its thread stopped and joined) before the members above
};

}  // namespace app
