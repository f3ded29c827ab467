// platform/signals: Ctrl+C and termination requests, taken on a thread of the caller's in ordinary code (never in
// a signal handler), and the few process-wide settings around them. POSIX: SIGINT/SIGTERM blocked and taken by
// sigtimedwait (Linux), or by a handler that only stores the signal (other Unix); Windows: a console control handler
// (Ctrl+C as SIGINT; Ctrl+Break, closing the console, log-off and shut-down as SIGTERM) and the C runtime's own SIGINT
// and SIGTERM (raise()).
#pragma once
#include <string_view>

namespace platform {

// Watches SIGINT and SIGTERM from construction to destruction. Construct it before any other thread exists: on
// POSIX the signals are blocked in the constructing thread, and threads created afterwards inherit that.
class InterruptSignals {
 public:
  InterruptSignals();
  ~InterruptSignals();  // stops watching; restores what was there before
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  // Waits up to `timeout_ms` for a request: returns its signal number (SIGINT 2, SIGTERM 15, as <csignal> names
  // them), or 0 when none came. Called from one thread.
  int wait(int timeout_ms);

 private:
  struct State;
  State* state_;
};

// A write to a pipe whose reader has gone is an error the writer reports (EPIPE), not a signal that kills the
// process (POSIX: SIGPIPE ignored; nothing to do on Windows).
void ignore_broken_pipe();

// Writes `text` to standard error at once, unbuffered, then ends the process with `code` without running any
// clean-up (_exit): what a second Ctrl+C does.
[[noreturn]] void write_and_exit_now(std::string_view text, int code);

}  // namespace platform
