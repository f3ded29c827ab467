// run::Turns: the dashboard's fair mode. On a software GPU (lavapipe runs its shaders on the CPU's own cores) or a
// machine with few cores, two trainers running at once take cores from each other, and each one's samples/s says as
// much about the other as about itself (measured: CPU 69.5k samples/s beside the GPU against 150.7k alone). With
// turns on, the workers take turns in time slices: one trains while the other waits with its training clock stopped,
// so each is timed alone, as `train --sequential` times them, while both curves still grow on screen.
//
// A worker takes the turn before it trains (take), passes it on after a read-back once its slice is over and another
// worker wants it (pass_if_over: the GPU's queue is empty then), and gives it up while it does not train (leave:
// paused, finished, stopped). Only training takes turns: a worker that builds a trainer (a start, a change of batch
// size or precision, compiling its kernels) steps aside (begin_aside .. end_aside) and the others train meanwhile, so
// that no backend waits for the other's compilation or rebuild; a worker waiting for its turn is woken by a command
// (`interrupt`) and applies it outside the turn. Turns are time slices that a long step cannot stretch: a worker
// waits at most longest_wait_s past the end of the holder's slice, then trains beside the holder's step. Training
// beside another worker's build or step is not training alone: shared_since() says so, and the worker's samples/s
// leave out those read-backs. Thread-safe; every call is cheap when turns are off.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace run {

class Turns {
 public:
  // `workers`: how many take turns (by index 0..workers-1); `slice_s`: how long one trains before the other's turn;
  // `longest_wait_s`: how long past the end of the holder's slice another waits for it at most.
  Turns(size_t workers, double slice_s, bool enabled, double longest_wait_s = kLongestWaitSeconds);

  void set_enabled(bool on);
  bool enabled() const;
  enum class Took {
    Free,         // the turn was free or i's already (or turns are off, or the session stops)
    Waited,       // i waited for the turn, then took it
    Overran,      // i waited longest_wait_s past the holder's slice and took the turn beside the holder's long step
    Interrupted,  // *interrupt was set (a command for i): i has not taken the turn; it applies the command first
  };
  // Worker `i` is about to train: returns at once when turns are off or the turn is free or i's; else waits until it
  // is i's turn, turns are switched off, `stop`/wake_all(), *interrupt (when given) is set, or the holder's slice has
  // been over for longest_wait_s.
  Took take(size_t i, const std::atomic<bool>& stop, const std::atomic<bool>* interrupt = nullptr);
  // After a read-back of worker i: hands the turn to the next worker that wants it when i's slice is over.
  void pass_if_over(size_t i);
  // Worker i does not train for now: it wants no turn (and gives up its own) until its next take().
  void leave(size_t i);
  // Worker i builds a trainer (or compiles) instead of training: as leave(), and until end_aside(i) the other
  // workers' training counts as shared (shared_since). end_aside without begin_aside does nothing.
  void begin_aside(size_t i);
  void end_aside(size_t i);
  // Whether worker i's training since `mark` (its value at i's previous call; 0 at first) may have run beside other
  // work: a worker building aside, or two workers training at once after an overrun. Updates `mark`. Always false
  // with turns off (then both always train at once, and the dashboard says so).
  bool shared_since(size_t i, long& mark) const;
  // Ends every wait (the session stops, or a command was posted: see take's `interrupt`).
  void wake_all();

  static constexpr double kSliceSeconds = 0.5;
  static constexpr double kLongestWaitSeconds = 1.5;

 private:
  using Clock = std::chrono::steady_clock;
  int next_wanting(size_t after) const;  // under mutex_; -1: none
  void back_in_turns(size_t i);          // under mutex_: i no longer trains beside the holder

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool enabled_;
  const double slice_s_;
  const double longest_wait_s_;
  int holder_ = -1;
  Clock::time_point since_{};
  std::vector<bool> wants_;
  std::vector<bool> aside_;   // building instead of training (begin_aside)
  std::vector<bool> beside_;  // still in the step it overran: training beside the holder
  long events_ = 0;           // counts every start and end of an aside or of a step beside the holder
};

}  // namespace run
