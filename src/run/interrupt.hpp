// run::InterruptWatch: SIGINT (Ctrl-C) and SIGTERM handled as a training program should: the first asks the run to
// stop cleanly (each backend after its current step, then the summary and the report of what was done), a second
// one ends the process at once. The signals are taken by a thread of the watch's own (platform::InterruptSignals), so the
// reaction runs in ordinary code (it may lock mutexes and print), not in a signal handler.
#pragma once
#include <atomic>
#include <functional>
#include <thread>

#include "platform/signals.hpp"

namespace run {

class InterruptWatch {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread; threads created afterwards inherit that, so construct the
  // watch before any other thread exists (a thread started earlier would still die of the signal). on_first(signal)
  // runs on the watch's thread for the first signal; a second one (at least 0.5 s later: the
  // copies of one request that a process group receives together do not count) writes a line to stderr and calls
  // _exit(128 + signal) (130 for SIGINT, 143 for SIGTERM), the shell's convention for "killed by that signal".
  explicit InterruptWatch(std::function<void(int signal)> on_first);
  ~InterruptWatch();  // stops watching and restores the signal mask
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  int signal() const { return signal_.load(); }                      // 0, or the first signal received
  int exit_code() const { return signal() ? 128 + signal() : 0; }  // 130 / 143 once interrupted
  static const char* name(int signal);                               // "SIGINT", "SIGTERM"

 private:
  void watch();

  std::function<void(int)> on_first_;
  std::atomic<int> signal_{0};
  std::atomic<bool> done_{false};
  platform::InterruptSignals signals_;  // before thread_: watching starts before the thread that waits on it
  std::thread thread_;
};

}  // namespace run
