// run::InterruptWatch in a child process: the first SIGINT/SIGTERM reaches on_first (ordinary code on the watch's
// thread) and the program goes on to end cleanly; a second one ends the process at once with 128 + the signal.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "run/interrupt.hpp"

namespace {

// Forks a child that installs a watch, reports "ready" and "first signal seen" through a pipe, then either ends
// cleanly with the watch's exit code or (slow_shutdown) sleeps as a long clean-up would. The parent sends `signals`,
// waiting for the child's report after the first and `gap` between the others; with `kill_after` > 0 it then ends
// the child with SIGKILL after that long. Returns the child's wait status.
int run_child(const std::vector<int>& signals, bool slow_shutdown,
              std::chrono::milliseconds gap = std::chrono::milliseconds(600),
              std::chrono::milliseconds kill_after = std::chrono::milliseconds(0)) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    // The child goes on once its report of the first signal is written: watch.signal() becomes true before
    // on_first runs, and an _exit in between closed the pipe unwritten (seen as a failed read under load).
    std::atomic<bool> reported{false};
    run::InterruptWatch watch([&](int) {
      [[maybe_unused]] auto n = ::write(fds[1], "F", 1);
      reported = true;
    });
    [[maybe_unused]] auto n = ::write(fds[1], "R", 1);
    while (!reported) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (slow_shutdown) std::this_thread::sleep_for(std::chrono::seconds(60));  // a second signal must cut this
    ::_exit(watch.exit_code());
  }
  ::close(fds[1]);
  char c = 0;
  REQUIRE(::read(fds[0], &c, 1) == 1);
  CHECK(c == 'R');
  for (size_t i = 0; i < signals.size(); ++i) {
    // By default later signals 0.6 s apart: copies of one request arriving together (within 0.5 s) count once.
    if (i > 0) std::this_thread::sleep_for(gap);
    ::kill(pid, signals[i]);
    if (i == 0) {
      REQUIRE(::read(fds[0], &c, 1) == 1);
      CHECK(c == 'F');
    }
  }
  if (kill_after.count() > 0) {
    std::this_thread::sleep_for(kill_after);
    ::kill(pid, SIGKILL);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("the first SIGINT or SIGTERM is handled in ordinary code and the program ends cleanly with 130 / 143") {
  for (const int signal : {SIGINT, SIGTERM}) {
    CAPTURE(signal);
    const int status = run_child({signal}, false);
    REQUIRE(WIFEXITED(status));  // not killed by the signal: it was taken by the watch
    CHECK(WEXITSTATUS(status) == 128 + signal);
  }
}

TEST_CASE("a second signal ends the process at once, during a slow clean shutdown") {
  const int status = run_child({SIGTERM, SIGINT}, true);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGINT);  // _exit from the watch, not the end of the 60 s clean-up
}

TEST_CASE("a second signal within 0.5 s of the first is the same request: the clean shutdown goes on") {
  // The slow shutdown is 60 s; the child is ended with SIGKILL after 2 s, which shows it was not cut short.
  const int status = run_child({SIGINT, SIGINT}, true, std::chrono::milliseconds(0), std::chrono::seconds(2));
  CHECK(WIFSIGNALED(status));  // still in its clean shutdown when killed
}

TEST_CASE("the watch restores the signal mask it found") {
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  { run::InterruptWatch watch(nullptr); }
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  CHECK(sigismember(&before, SIGINT) == sigismember(&after, SIGINT));
  CHECK(sigismember(&before, SIGTERM) == sigismember(&after, SIGTERM));
}
