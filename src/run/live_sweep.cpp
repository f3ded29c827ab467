// The sweep beside a live training (see live_sweep.hpp).
#include "run/live_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/metrics.hpp"  // core::monotonic_seconds
#include "platform/system.hpp"

namespace run {

LiveSweep::~LiveSweep() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool LiveSweep::start(SweepOptions options, std::function<core::DataSplit()> load, std::vector<BackendSpec> backends,
                      LiveSweepHooks hooks, bool lower_priority) {
  if (running()) return false;
  if (thread_.joinable()) thread_.join();  // an ended sweep poll() has not seen yet
  hooks_ = std::move(hooks);
  stop_ = false;
  finished_ = false;
  {
    std::lock_guard lock(mutex_);
    state_ = {};
    state_.options = std::move(options);
    state_.status = "pausing training";
    state_.running = true;
  }
  if (hooks_.post) hooks_.post(Command(Command::Kind::Pause));
  thread_ = std::thread([this, load = std::move(load), backends = std::move(backends), lower_priority]() mutable {
    run(std::move(load), std::move(backends), lower_priority);
    finished_ = true;
  });
  return true;
}

void LiveSweep::run(std::function<core::DataSplit()> load, std::vector<BackendSpec> backends, bool lower_priority) {
  if (lower_priority) platform::lower_this_thread_priority();  // as the training threads
  std::string note;
  try {
    // Every backend paused first: a training step running beside a timed point would slow both.
    const double t0 = core::monotonic_seconds();
    {
      std::lock_guard lock(mutex_);
      state_.started_s = t0;
    }
    while (hooks_.training_paused && !hooks_.training_paused() && !stop_) {
      if (core::monotonic_seconds() - t0 > hooks_.pause_timeout_s) {
        note = " (training did not pause in time: its steps shared the cores)";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    set_status("loading the data" + note);
    const core::DataSplit data = load();
    SweepOptions o;
    {
      std::lock_guard lock(mutex_);
      if (state_.options.batches.empty())
        for (int b : default_sweep_batches())
          if (b <= data.train.count) state_.options.batches.push_back(b);
      state_.status = "measuring" + note;
      o = state_.options;
      // As run_sweep counts them (its progress says so after the first point, which also makes the trainers).
      size_t series = 0;
      for (const auto& b : backends) series += b.name == "cpu" ? std::max<size_t>(1, o.cpu_threads.size()) : 1;
      state_.total = series * o.batches.size();
    }
    const SweepResult r = run_sweep(
        o, data, backends,
        [&](const SweepPoint& p, size_t, size_t total) {
          std::lock_guard lock(mutex_);
          state_.result.points.push_back(p);
          find_crossover(state_.result);
          state_.total = total;
        },
        &stop_);
    std::lock_guard lock(mutex_);
    state_.result = r;
    state_.seconds = core::monotonic_seconds() - state_.started_s;
    state_.status = (r.stopped ? "stopped" : "done") + note;
  } catch (const std::exception& e) {
    set_status(std::string("failed: ") + e.what());
  }
}

void LiveSweep::stop() { stop_ = true; }

bool LiveSweep::poll() {
  if (!finished_.exchange(false)) return false;
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    state_.running = false;
  }
  if (!hooks_.training_was_paused && hooks_.post) hooks_.post(Command(Command::Kind::Resume));
  return true;
}

LiveSweepState LiveSweep::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

bool LiveSweep::running() const {
  std::lock_guard lock(mutex_);
  return state_.running;
}

void LiveSweep::set_status(const std::string& status) {
  std::lock_guard lock(mutex_);
  state_.status = status;
}

}  // namespace run
