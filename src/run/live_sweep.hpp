// run::LiveSweep: the batch-size sweep (run/sweep.hpp) run beside a live training, for the dashboard's Sweep tab.
// start() pauses the training; the sweep thread waits until every backend says it is paused (so that no point shares
// the cores with training steps), then measures one point at a time with trainers of its own, fresh from the same
// initial weights: the paused training's trainers, weights and records are never touched. The points are published
// as they are measured; stop() ends the sweep after the current point; poll(), called on the owner's thread (the UI's
// frame loop), resumes the training once the sweep has ended, unless it was paused before the sweep began.
#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "run/command.hpp"
#include "run/session.hpp"
#include "run/sweep.hpp"

namespace run {

// How the sweep reaches the training it runs beside (in the dashboard: its Session, through the UI's Controller).
struct LiveSweepHooks {
  std::function<void(const Command&)> post;  // Pause at start(), Resume from poll() after the end
  std::function<bool()> training_paused;     // every backend has paused (or stopped): called on the sweep thread
  bool training_was_paused = false;          // paused before the sweep: poll() leaves it paused at the end
  double pause_timeout_s = 30;               // the sweep starts anyway after this long (and says so in its status)
};

struct LiveSweepState {
  SweepOptions options;  // as run (the batch sizes once the data is known)
  SweepResult result;    // the points so far, with the crossover of those
  size_t total = 0;      // points planned (0 until the data is loaded)
  std::string status;    // "" (never run), "pausing training", "loading the data", "measuring", "done", "stopped",
                         // or "failed: <what>"; a note is appended when training did not pause in time
  bool running = false;  // a sweep thread is at work (or has ended and poll() has not seen it yet)
  double started_s = 0;  // core::monotonic_seconds() at the start
  double seconds = 0;    // the whole sweep's wall time, once it has ended (pausing and loading included)
};

class LiveSweep {
 public:
  LiveSweep() = default;
  ~LiveSweep();  // stops a sweep under way after its current point and waits for it (no Resume is posted)
  LiveSweep(const LiveSweep&) = delete;
  LiveSweep& operator=(const LiveSweep&) = delete;

  // Posts Pause and starts the sweep thread; ignored (false) while a sweep runs. `load` gives the data (called on
  // the sweep thread; it may throw). Empty options.batches: default_sweep_batches() up to the training set's size.
  // lower_priority: the sweep thread (and the threads it creates) at nice +10, as the dashboard's training threads,
  // so that the UI thread is scheduled first.
  bool start(SweepOptions options, std::function<core::DataSplit()> load, std::vector<BackendSpec> backends,
             LiveSweepHooks hooks, bool lower_priority = false);
  void stop();  // ends the sweep after its current point (SweepResult::stopped)
  // On the owner's thread, regularly: when the sweep has ended, joins its thread and posts Resume unless training
  // was paused before. Returns true once, at that moment.
  bool poll();
  LiveSweepState state() const;  // a consistent copy, from any thread
  bool running() const;

 private:
  void run(std::function<core::DataSplit()> load, std::vector<BackendSpec> backends, bool lower_priority);
  void set_status(const std::string& status);

  std::thread thread_;
  std::atomic<bool> stop_{false}, finished_{false};
  LiveSweepHooks hooks_;
  mutable std::mutex mutex_;  // guards state_
  LiveSweepState state_;
};

}  // namespace run
