// The fair mode's turns (turns.hpp).
#include "run/turns.hpp"

#include <algorithm>

namespace run {

Turns::Turns(size_t workers, double slice_s, bool enabled, double longest_wait_s, double wait_cap_s)
    : enabled_(enabled),
      slice_s_(slice_s),
      longest_wait_s_(longest_wait_s),
      wait_cap_s_(std::max(longest_wait_s, wait_cap_s)),
      wants_(workers),
      aside_(workers),
      beside_(workers),
      took_at_(workers),
      step_s_(workers) {}

void Turns::set_enabled(bool on) {
  {
    std::lock_guard lock(mutex_);
    enabled_ = on;
    if (!on) holder_ = -1;
    ++events_;  // figures of a read-back across the switch mix both modes
  }
  cv_.notify_all();
}

bool Turns::enabled() const {
  std::lock_guard lock(mutex_);
  return enabled_;
}

int Turns::next_wanting(size_t after) const {
  const size_t n = wants_.size();
  for (size_t k = 1; k <= n; ++k) {
    const size_t j = (after + k) % n;
    if (wants_[j] && j != after) return static_cast<int>(j);
  }
  return -1;
}

void Turns::back_in_turns(size_t i) {
  if (!beside_.at(i)) return;
  beside_[i] = false;
  ++events_;
}

double Turns::wait_limit_s(size_t h) const {
  std::lock_guard lock(mutex_);
  return wait_limit_locked(h);
}

double Turns::wait_limit_locked(size_t h) const {
  return std::clamp(kStepMargin * step_s_.at(h), longest_wait_s_, wait_cap_s_);
}

double Turns::step_beyond_cap_s() const {
  std::lock_guard lock(mutex_);
  double longest = 0;
  for (double s : step_s_)
    if (s > slice_s_ + wait_cap_s_) longest = std::max(longest, s);
  return enabled_ ? longest : 0;
}

Turns::Took Turns::take(size_t i, const std::atomic<bool>& stop, const std::atomic<bool>* interrupt) {
  std::unique_lock lock(mutex_);
  wants_.at(i) = true;
  back_in_turns(i);
  Took took = Took::Free;
  const int me = static_cast<int>(i);
  if (enabled_ && holder_ >= 0 && holder_ != me) {
    took = Took::Waited;
    for (;;) {
      if (holder_ < 0 || holder_ == me || !enabled_ || stop) break;
      if (interrupt && interrupt->load()) return Took::Interrupted;
      // The holder's slice is over and its step still runs: wait as long as its steps take (wait_limit_locked), not
      // for a hung one.
      const std::chrono::duration<double> limit(slice_s_ + wait_limit_locked(static_cast<size_t>(holder_)));
      const auto deadline = since_ + std::chrono::duration_cast<Clock::duration>(limit);
      if (Clock::now() >= deadline) {
        beside_.at(static_cast<size_t>(holder_)) = true;
        ++events_;
        took = Took::Overran;
        break;
      }
      cv_.wait_until(lock, deadline);
    }
  }
  took_at_[i] = Clock::now();
  if (!enabled_ || stop || (holder_ == me && took == Took::Free)) return took;
  holder_ = me;
  since_ = took_at_[i];
  return took;
}

void Turns::pass_if_over(size_t i) {
  {
    std::lock_guard lock(mutex_);
    // Learnt also from a step that was overrun (back_in_turns below): the next wait for i is long enough.
    if (took_at_.at(i) != Clock::time_point{})
      step_s_[i] = std::chrono::duration<double>(Clock::now() - took_at_[i]).count();
    back_in_turns(i);
    if (!enabled_ || holder_ != static_cast<int>(i)) return;
    if (std::chrono::duration<double>(Clock::now() - since_).count() < slice_s_) return;
    const int next = next_wanting(i);
    if (next < 0) {  // nobody else wants to train: a new slice of its own
      since_ = Clock::now();
      return;
    }
    holder_ = next;
    since_ = Clock::now();
  }
  cv_.notify_all();
}

void Turns::leave(size_t i) {
  {
    std::lock_guard lock(mutex_);
    wants_.at(i) = false;
    back_in_turns(i);
    if (holder_ != static_cast<int>(i)) return;
    holder_ = next_wanting(i);
    since_ = Clock::now();
  }
  cv_.notify_all();
}

void Turns::begin_aside(size_t i) {
  {
    std::lock_guard lock(mutex_);
    if (!aside_.at(i)) aside_[i] = true, ++events_;
  }
  leave(i);
}

void Turns::end_aside(size_t i) {
  std::lock_guard lock(mutex_);
  if (aside_.at(i)) aside_[i] = false, ++events_;
}

bool Turns::shared_since(size_t i, long& mark) const {
  std::lock_guard lock(mutex_);
  bool shared = events_ != mark || beside_.at(i);
  for (size_t j = 0; j < aside_.size(); ++j)
    if (j != i && (aside_[j] || beside_[j])) shared = true;
  mark = events_;
  return enabled_ && shared;
}

void Turns::wake_all() {
  { std::lock_guard lock(mutex_); }
  cv_.notify_all();
}

}  // namespace run
