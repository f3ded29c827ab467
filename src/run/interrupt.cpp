// The signal-watching thread of run::InterruptWatch.
#include "run/interrupt.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>

namespace run {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

const char* InterruptWatch::name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

InterruptWatch::InterruptWatch(std::function<void(int)> on_first) : on_first_(std::move(on_first)) {
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  thread_ = std::thread([this] { watch(); });
}

InterruptWatch::~InterruptWatch() {
  done_ = true;
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void InterruptWatch::watch() {
  const sigset_t set = watched_signals();
  // A short timeout, so that the destructor's done_ is seen; the signals themselves wake the wait at once.
  const timespec timeout{0, 100'000'000};
  // One request often arrives as two signals within milliseconds: a terminal's Ctrl-C goes to the whole process
  // group, and `timeout` or `kill 0` signal the child and then the group. A second signal counts as "again" only
  // after this much time, as a person pressing Ctrl-C a second time does.
  constexpr auto kSameRequest = std::chrono::milliseconds(500);
  std::chrono::steady_clock::time_point first_at;
  while (!done_) {
    const int got = sigtimedwait(&set, nullptr, &timeout);
    if (got < 0) continue;  // EAGAIN (timeout) or EINTR
    if (signal_.load() == 0) {
      signal_ = got;
      first_at = std::chrono::steady_clock::now();
      if (on_first_) on_first_(got);
      continue;
    }
    if (std::chrono::steady_clock::now() - first_at < kSameRequest) continue;
    // The second: no clean-up, no report; only a line saying why the process ends (write(2): nothing buffered).
    const std::string line = fmt::format("\ntrainscope: {} again: exiting at once\n", name(got));
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    ::_exit(128 + got);
  }
}

}  // namespace run
