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
// (`interrupt`) and applies it outside the turn. Turns are time slices that a hung step cannot stretch for ever: a
// worker waits past the end of the holder's slice for at most the holder's own longest pause between two chances to
// pass the turn, as measured (wait_limit_s), then trains beside the holder's step. Training beside another worker's
// build or step is not training alone: shared_since() says so, and the worker's samples/s leave out those read-backs.
// Thread-safe; every call is cheap when turns are off.
//
// Why the wait follows the holder's steps: with a fixed wait of 1.5 s, a backend whose one step took more than about
// 2 s (a slow GPU; the spec-min profile's context-128 transformer on lavapipe: 3.5 s a step) was overrun at every
// step, so neither backend was ever timed alone and the header said "measuring samples/s" for ever.
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
  // `longest_wait_s`: how long past the end of the holder's slice another waits for it at least (the holder's step
  // not known yet, or short); `wait_cap_s`: at most, whatever the holder's steps (wait_limit_s).
  Turns(size_t workers, double slice_s, bool enabled, double longest_wait_s = kLongestWaitSeconds,
        double wait_cap_s = kWaitCapSeconds);

  void set_enabled(bool on);
  bool enabled() const;
  enum class Took {
    Free,         // the turn was free or i's already (or turns are off, or the session stops)
    Waited,       // i waited for the turn, then took it
    Overran,      // i waited wait_limit_s past the holder's slice and took the turn beside the holder's long step
    Interrupted,  // *interrupt was set (a command for i): i has not taken the turn; it applies the command first
  };
  // Worker `i` is about to train: returns at once when turns are off or the turn is free or i's; else waits until it
  // is i's turn, turns are switched off, `stop`/wake_all(), *interrupt (when given) is set, or the holder's slice has
  // been over for wait_limit_s(holder).
  Took take(size_t i, const std::atomic<bool>& stop, const std::atomic<bool>* interrupt = nullptr);
  // After a read-back of worker i: hands the turn to the next worker that wants it when i's slice is over. The time
  // since i's last take() is its step (and read-back): what the others wait for when i holds the turn.
  void pass_if_over(size_t i);
  // How long past the end of worker h's slice another worker waits for h at most: its last step (take .. pass_if_over)
  // times kStepMargin, at least longest_wait_s, at most wait_cap_s.
  double wait_limit_s(size_t h) const;
  // The step of the worker whose steps outlast any wait (longer than slice_s + wait_cap_s: no backend is timed alone
  // while they take turns, the header says why), in seconds; 0 when there is none. Always 0 with turns off.
  double step_beyond_cap_s() const;
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
  // A step's time varies (a read-back, a decision-boundary map, a piece of background compile after it): half again
  // as long as the last one is waited for, so that a step a little slower than the one before is not overrun.
  static constexpr double kStepMargin = 1.5;
  // While a worker waits its curve stands still and its figures age on screen (a command still ends the wait): past
  // 20 s it would look hung, so steps longer than that (about 20.5 s with the slice) are trained beside each other, not
  // timed alone, and the header says so (step_beyond_cap_s). 20 s covers the spec-min profile's 3.5 s steps.
  static constexpr double kWaitCapSeconds = 20.0;

 private:
  using Clock = std::chrono::steady_clock;
  int next_wanting(size_t after) const;  // under mutex_; -1: none
  void back_in_turns(size_t i);          // under mutex_: i no longer trains beside the holder
  double wait_limit_locked(size_t h) const;  // wait_limit_s under mutex_

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool enabled_;
  const double slice_s_;
  const double longest_wait_s_;
  const double wait_cap_s_;
  int holder_ = -1;
  Clock::time_point since_{};
  std::vector<bool> wants_;
  std::vector<bool> aside_;   // building instead of training (begin_aside)
  std::vector<bool> beside_;  // still in the step it overran: training beside the holder
  std::vector<Clock::time_point> took_at_;  // each worker's last take() that let it train
  std::vector<double> step_s_;              // each worker's last take() .. pass_if_over(), seconds; 0: not known
  long events_ = 0;           // counts every start and end of an aside or of a step beside the holder
};

}  // namespace run
