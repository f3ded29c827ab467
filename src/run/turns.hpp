// run::Turns: the dashboard's fair mode. On a software GPU (lavapipe runs its shaders on the CPU's own cores) or a
// machine with few cores, two trainers running at once take cores from each other, and each one's samples/s says as
// much about the other as about itself (measured: CPU 69.5k samples/s beside the GPU against 150.7k alone). With
// turns on, the workers take turns in time slices: one trains while the other waits with its training clock stopped,
// so each is timed alone, as `train --sequential` times them, while both curves still grow on screen.
//
// A worker takes the turn before it applies commands and trains (take), passes it on after a read-back once its slice
// is over and another worker wants it (pass_if_over: the GPU's queue is empty then), and gives it up while it does not
// train (leave: paused, finished, stopped). Thread-safe; every call is cheap when turns are off.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace run {

class Turns {
 public:
  // `workers`: how many take turns (by index 0..workers-1); `slice_s`: how long one trains before the other's turn.
  Turns(size_t workers, double slice_s, bool enabled);

  void set_enabled(bool on);
  bool enabled() const;
  // Worker `i` is about to train: returns at once when turns are off or the turn is free or i's; else waits until it
  // is i's turn, turns are switched off, or `stop`/wake_all(). Returns true when it waited.
  bool take(size_t i, const std::atomic<bool>& stop);
  // After a read-back of worker i: hands the turn to the next worker that wants it when i's slice is over.
  void pass_if_over(size_t i);
  // Worker i does not train for now: it wants no turn (and gives up its own) until its next take().
  void leave(size_t i);
  // Ends every wait (the session stops).
  void wake_all();

  static constexpr double kSliceSeconds = 0.5;

 private:
  using Clock = std::chrono::steady_clock;
  int next_wanting(size_t after) const;  // under mutex_; -1: none

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool enabled_;
  const double slice_s_;
  int holder_ = -1;
  Clock::time_point since_{};
  std::vector<bool> wants_;
};

}  // namespace run
