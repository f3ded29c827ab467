// What a worker does besides training: taking turns with the other workers in the fair mode (run/turns.hpp), and the
// background work of its backend (BackendSpec::background), both with its training clock stopped.
#include <fmt/format.h>

#include <exception>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "run/worker.hpp"

namespace run {

bool Worker::take_turn() {
  if (!turns_) return true;
  clock_.stop();  // waiting for the turn is not training time (the next step starts the clock again)
  const Turns::Took took = turns_->take(turn_index_, stop_, &commands_waiting_);
  if (took == Turns::Took::Interrupted) return false;
  if (took != Turns::Took::Free) {
    timeline_.add_break();  // the other backend's turn is no overhead of this one's steps
    last_step_end_s_ = 0;
  }
  return true;
}

void Worker::leave_turn() {
  if (turns_) turns_->leave(turn_index_);
}

void Worker::pass_turn_if_over() {
  if (!turns_) return;
  clock_.stop();
  turns_->pass_if_over(turn_index_);
}

std::string Worker::turns_rate_note() const {
  const double step_s = turns_ ? turns_->step_beyond_cap_s() : 0;
  return step_s > 0 ? fmt::format("{:.0f} s steps outlast the turns", step_s) : std::string();
}

void Worker::run_background() {
  // A command waiting goes first: a piece cannot be stopped once it runs (a kernel set takes seconds to create).
  if (!spec_.background || background_done_ || paused_ || !trainer_ || commands_waiting_) return;
  // At most half of the worker's time: after a piece of d seconds, the next waits until it has trained d seconds.
  if (clock_.seconds() < background_due_s_) return;
  clock_.stop();
  const double start = core::monotonic_seconds();
  std::string what, failed;
  try {
    what = spec_.background();
  } catch (const std::exception& e) {  // the training goes on; what is not compiled yet is compiled when needed
    failed = fmt::format("background compile stopped: {}", e.what());
  }
  background_due_s_ = clock_.seconds() + (core::monotonic_seconds() - start);
  background_done_ = what.empty();
  // Its time is no step's: the next step's wall time starts after it.
  last_step_end_s_ = 0;
  timeline_.add_break();
  std::lock_guard lock(run_mutex_);
  run_.background = what;
  if (!failed.empty()) run_.status = failed;
}

}  // namespace run
