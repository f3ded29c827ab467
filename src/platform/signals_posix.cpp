// platform/signals on POSIX systems (signals.hpp).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "platform/signals.hpp"

namespace platform {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

#ifndef __linux__
std::atomic<int> g_pending{0};  // the handler's only action: store the signal (async-signal-safe)
extern "C" void store_signal(int signal) { g_pending.store(signal); }
#endif

}  // namespace

struct InterruptSignals::State {
  sigset_t old_mask{};
#ifndef __linux__
  struct sigaction old_int {}, old_term {};
#endif
};

InterruptSignals::InterruptSignals() : state_(new State) {
#ifdef __linux__
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, &state_->old_mask);
#else
  struct sigaction sa {};
  sa.sa_handler = store_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &state_->old_int);
  sigaction(SIGTERM, &sa, &state_->old_term);
#endif
}

InterruptSignals::~InterruptSignals() {
#ifdef __linux__
  pthread_sigmask(SIG_SETMASK, &state_->old_mask, nullptr);
#else
  sigaction(SIGINT, &state_->old_int, nullptr);
  sigaction(SIGTERM, &state_->old_term, nullptr);
#endif
  delete state_;
}

int InterruptSignals::wait(int timeout_ms) {
#ifdef __linux__
  const sigset_t set = watched_signals();
  const timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1'000'000L};
  const int got = sigtimedwait(&set, nullptr, &timeout);
  return got > 0 ? got : 0;  // EAGAIN (timeout) or EINTR: none
#else
  // No sigtimedwait (macOS): the handler stores the signal; poll for it in small steps.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    if (const int got = g_pending.exchange(0)) return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < until);
  return 0;
#endif
}

void ignore_broken_pipe() { std::signal(SIGPIPE, SIG_IGN); }

void write_and_exit_now(std::string_view text, int code) {
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
  ::_exit(code);
}

}  // namespace platform
