// The signal-watching thread of run::InterruptWatch.
#include "run/interrupt.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>

namespace run {

const char* InterruptWatch::name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

InterruptWatch::InterruptWatch(std::function<void(int)> on_first) : on_first_(std::move(on_first)) {
  thread_ = std::thread([this] { watch(); });
}

InterruptWatch::~InterruptWatch() {
  done_ = true;
  thread_.join();
}

void InterruptWatch::watch() {
  // One request often arrives as two signals within milliseconds: a terminal's Ctrl-C goes to the whole process
  // group, and `timeout` or `kill 0` signal the child and then the group. A second signal counts as "again" only
  // after this much time, as a person pressing Ctrl-C a second time does.
  constexpr auto kSameRequest = std::chrono::milliseconds(500);
  std::chrono::steady_clock::time_point first_at;
  while (!done_) {
    // A short timeout, so that the destructor's done_ is seen; the signals themselves wake the wait at once.
    const int got = signals_.wait(100);
    if (got == 0) continue;
    if (signal_.load() == 0) {
      signal_ = got;
      first_at = std::chrono::steady_clock::now();
      if (on_first_) on_first_(got);
      continue;
    }
    if (std::chrono::steady_clock::now() - first_at < kSameRequest) continue;
    // The second: no clean-up, no report; only a line saying why the process ends.
    platform::write_and_exit_now(fmt::format("\ntrainscope: {} again: exiting at once\n", name(got)), 128 + got);
  }
}

}  // namespace run
