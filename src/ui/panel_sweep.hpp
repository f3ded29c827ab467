// The Sweep tab: the batch-size sweep run live from the dashboard (run::LiveSweep: training paused meanwhile, and
// resumed after unless it was paused before). The points appear as they are measured on a log-log plot of samples/s
// against the batch size, one line per backend, with the crossover marked and explained below; Save writes the
// results as `trainscope sweep --report` / `--csv` would (JSON and CSV beside the screenshots).
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "run/live_sweep.hpp"
#include "ui/panel.hpp"

namespace ui {

class SweepPanel {
 public:
  // Every frame, whichever tab is shown: starts a requested sweep, resumes training after one has ended.
  void update(const DashboardView& view, Controller* controller);
  void draw(const DashboardView& view, Controller* controller);
  void request_start() { start_requested_ = true; }  // at the next update() (a lesson's "do": "sweep")
  bool busy() const { return start_requested_ || sweep_.running(); }
  run::LiveSweepState state() const { return sweep_.state(); }

 private:
  void start(const DashboardView& view, Controller& controller);
  void save(const run::LiveSweepState& state);
  void draw_plot(const run::SweepResult& result, float height) const;

  // Every backend of the training is paused (or stopped), as the last frame saw it; read by the sweep thread.
  std::shared_ptr<std::atomic<bool>> training_paused_ = std::make_shared<std::atomic<bool>>(false);
  std::string saved_;  // the last Save's message (where the files went, or why not)
  bool start_requested_ = false;
  run::LiveSweep sweep_;  // last: destroyed (its thread stopped and joined) before the members above
};

}  // namespace ui
