// platform/signals on Windows (signals.hpp): a console control handler stores the request and wakes the waiting
// thread through an event. Ctrl+C counts as SIGINT; Ctrl+Break, closing the console, log-off and shut-down as SIGTERM.
#include <windows.h>

#include <atomic>
#include <csignal>
#include <cstdlib>

#include "platform/signals.hpp"

namespace platform {
namespace {

std::atomic<int> g_pending{0};
HANDLE g_event = nullptr;

void store(int signal) {
  g_pending.store(signal);
  if (g_event) SetEvent(g_event);
}

BOOL WINAPI on_console_event(DWORD event) {
  store(event == CTRL_C_EVENT ? SIGINT : SIGTERM);
  return TRUE;  // handled: the process is not ended by the default handler
}

// The C runtime's signals (raise(SIGINT), SIGTERM from the runtime): the same request. The runtime resets a handler
// to the default before calling it, so it installs itself again.
extern "C" void on_runtime_signal(int signal) {
  std::signal(signal, on_runtime_signal);
  store(signal);
}

}  // namespace

struct InterruptSignals::State {
  void (*old_int)(int) = SIG_DFL;
  void (*old_term)(int) = SIG_DFL;
};

InterruptSignals::InterruptSignals() : state_(new State) {
  g_event = CreateEventW(nullptr, FALSE, FALSE, nullptr);
  SetConsoleCtrlHandler(on_console_event, TRUE);
  state_->old_int = std::signal(SIGINT, on_runtime_signal);
  state_->old_term = std::signal(SIGTERM, on_runtime_signal);
}

InterruptSignals::~InterruptSignals() {
  SetConsoleCtrlHandler(on_console_event, FALSE);
  std::signal(SIGINT, state_->old_int == SIG_ERR ? SIG_DFL : state_->old_int);
  std::signal(SIGTERM, state_->old_term == SIG_ERR ? SIG_DFL : state_->old_term);
  if (g_event) CloseHandle(g_event);
  g_event = nullptr;
  delete state_;
}

int InterruptSignals::wait(int timeout_ms) {
  if (const int got = g_pending.exchange(0)) return got;
  if (g_event) WaitForSingleObject(g_event, static_cast<DWORD>(timeout_ms));
  return g_pending.exchange(0);
}

void ignore_broken_pipe() {}  // Windows has no SIGPIPE: a write to a closed pipe fails with an error

void write_and_exit_now(std::string_view text, int code) {
  DWORD written = 0;
  WriteFile(GetStdHandle(STD_ERROR_HANDLE), text.data(), static_cast<DWORD>(text.size()), &written, nullptr);
  std::_Exit(code);
}

}  // namespace platform
