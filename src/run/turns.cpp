// The fair mode's turns (turns.hpp).
#include "run/turns.hpp"

namespace run {

Turns::Turns(size_t workers, double slice_s, bool enabled) : enabled_(enabled), slice_s_(slice_s), wants_(workers) {}

void Turns::set_enabled(bool on) {
  {
    std::lock_guard lock(mutex_);
    enabled_ = on;
    if (!on) holder_ = -1;
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

bool Turns::take(size_t i, const std::atomic<bool>& stop) {
  std::unique_lock lock(mutex_);
  wants_.at(i) = true;
  if (!enabled_) return false;
  const int me = static_cast<int>(i);
  if (holder_ == me) return false;
  bool waited = false;
  if (holder_ >= 0) {
    waited = true;
    cv_.wait(lock, [&] { return holder_ < 0 || holder_ == me || !enabled_ || stop; });
    if (!enabled_ || stop) return waited;
  }
  holder_ = me;
  since_ = Clock::now();
  return waited;
}

void Turns::pass_if_over(size_t i) {
  {
    std::lock_guard lock(mutex_);
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
    if (holder_ != static_cast<int>(i)) return;
    holder_ = next_wanting(i);
    since_ = Clock::now();
  }
  cv_.notify_all();
}

void Turns::wake_all() {
  { std::lock_guard lock(mutex_); }
  cv_.notify_all();
}

}  // namespace run
