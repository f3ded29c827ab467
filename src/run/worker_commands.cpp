// One backend's training loop, its commands: applied at the next step boundary (apply_commands), pausing in between,
// and each command's effect (handle): pause, single step, reset, a new learning rate in place, a new batch size,
// optimizer, precision, teaching toggle or thread count by rebuilding the trainer (worker_build.cpp). A command whose
// value the command line would refuse is refused with the same words. (The loop itself: worker.cpp.)
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/options.hpp"
#include "run/worker.hpp"

namespace run {

Worker::Next Worker::apply_commands() {
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    while (!queue_.empty()) {
      Command c = queue_.front();
      queue_.pop_front();
      lock.unlock();
      const Next next = handle(c);
      lock.lock();
      if (next != Next::Train) return next;
    }
    commands_waiting_ = false;  // under queue_mutex_, the queue empty
    if (stop_) return Next::Stop;
    if (!paused_ || step_budget_ > 0) return Next::Train;
    // Paused: read back what is queued, then wait for the next command (the turn goes to the other worker; the loop
    // takes it again before the next step).
    lock.unlock();
    collect();
    clock_.stop();
    leave_turn();
    {
      std::lock_guard run_lock(run_mutex_);
      run_.paused = true;
    }
    lock.lock();
    queue_cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    {
      std::lock_guard run_lock(run_mutex_);
      run_.paused = false;
    }
    timeline_.add_break();  // the pause is no step's overhead
    last_step_end_s_ = 0;   // nor any step's wall time (CSV, the run's busy share)
  }
}

namespace {

// "" when `value` passes `rule` (core/options: the command line's rule), else its message.
template <typename Rule, typename T>
std::string refusal(const Rule& rule, T value) {
  try {
    core::check(rule, value);
    return "";
  } catch (const core::Error& e) {
    return e.what();
  }
}

}  // namespace

Worker::Next Worker::handle(const Command& c) {
  using K = Command::Kind;
  switch (c.kind) {
    case K::Pause: paused_ = true; step_budget_ = 0; return Next::Train;
    case K::Resume: paused_ = false; step_budget_ = 0; return Next::Train;
    case K::SingleStep:
      if (paused_) step_budget_ = 1;
      return Next::Train;
    case K::Reset: pending_reset_ = c; return Next::Restart;
    case K::SetLearningRate: set_learning_rate(c); return Next::Train;
    case K::SetBatch: set_batch(c); return Next::Train;
    case K::SetOptimizer: {
      if (c.optimizer == cfg_.optimizer) return Next::Train;
      core::TrainConfig next = cfg_;
      next.optimizer = c.optimizer;
      rebuild(c, next, fmt::format("{} -> {}", core::to_string(cfg_.optimizer), core::to_string(c.optimizer)));
      return Next::Train;
    }
    case K::SetPrecision: set_precision(c); return Next::Train;
    case K::SetToggle: {
      if (cfg_.execution[c.toggle] == c.on) return Next::Train;
      core::TrainConfig next = cfg_;
      next.execution[c.toggle] = c.on;
      rebuild(c, next, fmt::format("{} {}", core::to_string(c.toggle), c.on ? "on" : "off"));
      return Next::Train;
    }
    case K::SetInput: set_input(c); return Next::Train;
    case K::SetThreads: set_threads(c); return Next::Train;
  }
  return Next::Train;
}

void Worker::set_learning_rate(const Command& c) {
  if (c.lr == cfg_.lr) return;
  if (const std::string why = refusal(core::rules::lr, c.lr); !why.empty()) {
    refuse(c, fmt::format("learning rate refused: {}", why));
    return;
  }
  collect();
  const std::string label = fmt::format("lr {:g} -> {:g}", cfg_.lr, c.lr);
  trainer_->set_learning_rate(c.lr);
  cfg_.lr = c.lr;
  std::lock_guard lock(run_mutex_);
  run_.config = cfg_;
  run_.running.lr = trainer_->learning_rate();
  run_.markers.push_back({static_cast<long>(run_.step_losses.size()), clock_.seconds(), label});
}

void Worker::set_batch(const Command& c) {
  if (c.value == cfg_.batch) return;
  if (const std::string why = refusal(core::rules::batch, c.value); !why.empty() || c.value > data_->train.count) {
    refuse(c, fmt::format("batch {} refused: must be 1..{} (at most the training set size)", c.value,
                          std::min<long long>(core::rules::batch.max, data_->train.count)));
    return;
  }
  core::TrainConfig next = cfg_;
  next.batch = c.value;
  rebuild(c, next, fmt::format("batch {} -> {}", cfg_.batch, c.value));
}

void Worker::set_precision(const Command& c) {
  if (c.precision == cfg_.precision) return;
  const std::string label =
      fmt::format("{} -> {}", core::to_string(cfg_.precision), core::to_string(c.precision));
  const std::string why = trainer_->unsupported_reason(c.precision);
  if (!why.empty()) {
    refuse(c, fmt::format("{} refused: {}", label, why));
    return;
  }
  core::TrainConfig next = cfg_;
  next.precision = c.precision;
  rebuild(c, next, label);
}

void Worker::set_input(const Command& c) {
  if (c.input == cfg_.input) return;
  for (auto [rule, value] : {std::pair{&core::rules::loader_threads, c.input.loader_threads},
                             {&core::rules::prefetch, c.input.prefetch}})
    if (const std::string why = refusal(*rule, value); !why.empty()) {
      refuse(c, fmt::format("input refused: {}", why));
      return;
    }
  core::TrainConfig next = cfg_;
  next.input = c.input;
  // The loader is the new trainer's (run::backends_from_config): it starts at this step's place in the epoch.
  rebuild(c, next, fmt::format("input {}", core::to_string(c.input)));
}

void Worker::set_threads(const Command& c) {
  if (spec_.name != "cpu" || c.value == cfg_.threads) return;
  if (const std::string why = refusal(core::rules::threads, c.value); !why.empty()) {
    refuse(c, fmt::format("threads refused: {}", why));
    return;
  }
  core::TrainConfig next = cfg_;
  next.threads = c.value;
  rebuild(c, next, fmt::format("threads {} -> {}", cfg_.threads, c.value));
}

}  // namespace run
