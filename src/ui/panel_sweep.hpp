// The Sweep tab: the batch-size sweep (run/sweep.hpp) run live from the dashboard. Training is paused meanwhile (and
// resumed after, unless it was paused before); the points appear as they are measured on a log-log plot of samples/s
// against the batch size, one line per backend, with the crossover marked and explained below.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "run/sweep.hpp"
#include "ui/panel.hpp"

namespace ui {

class SweepPanel {
 public:
  SweepPanel() = default;
  ~SweepPanel();  // stops a sweep under way (after its current point) and waits for it
  SweepPanel(const SweepPanel&) = delete;
  SweepPanel& operator=(const SweepPanel&) = delete;

  void draw(const DashboardView& view, Controller* controller);
  bool running() const { return running_; }

 private:
  void start(const core::TrainConfig& config);
  void draw_plot(const run::SweepResult& result, float height) const;

  std::thread thread_;
  std::atomic<bool> running_{false}, stop_{false}, finished_{false};
  bool resume_after_ = false;  // training was running when the sweep started: resume it at the end
  mutable std::mutex mutex_;   // guards result_, total_, status_
  run::SweepResult result_;
  size_t total_ = 0;
  std::string status_;
};

}  // namespace ui
