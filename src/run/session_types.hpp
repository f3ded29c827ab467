// The types a run::Session and its workers share (run/session.hpp, run/worker.hpp): how a backend's trainer is made
// (BackendSpec), the progress callbacks (Observer) and the session's options. A header of their own, so that the
// worker does not include the session that owns it.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/metrics.hpp"
#include "core/trainer.hpp"

namespace run {

// Makes one backend's trainer; may throw core::Error (e.g. Vulkan when there is no Vulkan device).
using TrainerFactory = std::function<std::unique_ptr<core::Trainer>(
    const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params)>;

struct BackendSpec {
  std::string name;  // "gpu" | "cpu" (or a test's fake)
  TrainerFactory make;
  // What its trainers allocate is this machine's memory (the CPU; a software Vulkan device such as lavapipe), so the
  // host memory budget counts it (core::check_training_memory). False for a real GPU's device memory.
  bool host_memory = true;
  // Work the worker does a piece at a time between steps while it trains (the dashboard compiles every pipeline the
  // controls can select: run/background_compile.hpp): does one piece (a fraction of a second) and returns what it is
  // doing, shown in BackendRun::background, or "" when nothing is left. Called on the worker's thread after a
  // read-back, with its training clock stopped, at most half of the worker's time (after a piece of d seconds the
  // next waits for d seconds of training). May throw core::Error (then it stops, with a status). Empty: none.
  std::function<std::string()> background = {};
};

// Progress callbacks. They are called from the worker threads, possibly two at once: implementations must be
// thread-safe and quick (they run between training steps; their time is left out of samples/s).
class Observer {
 public:
  virtual ~Observer() = default;
  // The trainer exists; `device` is its Trainer::device_name().
  virtual void on_start(const std::string& backend, const std::string& device) { (void)backend, (void)device; }
  // Steps just read back. step_in_epoch counts finished steps of this epoch (1..steps_per_epoch); epoch from 1.
  virtual void on_steps(const std::string& backend, std::span<const core::StepRecord> records, int epoch,
                        int step_in_epoch, int steps_per_epoch) {
    (void)backend, (void)records, (void)epoch, (void)step_in_epoch, (void)steps_per_epoch;
  }
  virtual void on_epoch(const std::string& backend, const core::EpochRecord& epoch) { (void)backend, (void)epoch; }
  // The backend stopped: its creation or a step threw. The other backends keep running.
  virtual void on_error(const std::string& backend, const std::string& message) { (void)backend, (void)message; }
};

struct SessionOptions {
  // The dashboard: workers stay alive after the last epoch (or an error) and wait for a Reset. Ignored with
  // cfg.sequential (one worker runs the backends in turn, so each must end).
  bool keep_alive = false;
  // The dashboard: the training threads (and the threads they create: the CPU thread pool, a software Vulkan
  // driver's workers) run at nice +10, so that the UI thread is scheduled first and never freezes, also when the
  // trainers keep every core busy. Training still gets all the CPU the UI leaves.
  bool lower_priority = false;
  // The steps each backend's step timeline keeps (BackendRun::timeline): the dashboard's Timeline tab, train's
  // --trace-steps. At least 1.
  size_t timeline_steps = 8;
  // The dashboard's fair mode (run/turns.hpp): the backends take turns in time slices, each timed alone. Switched
  // with Session::set_fair(); ignored with cfg.sequential.
  bool fair = false;
};

}  // namespace run
