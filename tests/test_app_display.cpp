// The dashboard when its X server goes away (issue 25, item 19): before, Xlib's "XIO: fatal IO error" was all that
// was said and the exit code 1 came from Xlib; now trainscope says what happened first. The test starts an Xvfb of
// its own (-displayfd picks a free display, so it never collides with another test's), opens the dashboard on it
// with a lesson that waits, then ends the server.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"
#include "skip.hpp"

extern char** environ;

namespace fs = std::filesystem;

TEST_CASE("the X server ends under the dashboard: trainscope's own line on stderr, exit code 1") {
  if (!fs::exists("/usr/bin/Xvfb")) {
    test::skip("the dashboard losing its display", "Xvfb is not installed (apt-get install xvfb)");
    return;
  }
  if (!test::vulkan_device_or_skip("the dashboard losing its display")) return;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string fd = std::to_string(fds[1]);
  const char* argv[] = {"Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1024x768x24", "-nolisten", "tcp", nullptr};
  pid_t xvfb = 0;
  REQUIRE(::posix_spawn(&xvfb, "/usr/bin/Xvfb", nullptr, nullptr, const_cast<char**>(argv), environ) == 0);
  ::close(fds[1]);
  std::string number;  // Xvfb writes the display number and a newline once it accepts connections
  pollfd p{fds[0], POLLIN, 0};
  while (number.find('\n') == std::string::npos && ::poll(&p, 1, 20000) > 0) {
    char c[16];
    const ssize_t n = ::read(fds[0], c, sizeof c);
    if (n <= 0) break;
    number.append(c, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  REQUIRE_MESSAGE(number.find('\n') != std::string::npos, "Xvfb did not start");
  std::string display = ":";  // (not ":" + ...: GCC 12's -Wrestrict misfires on that)
  display += number.substr(0, number.find('\n'));

  const fs::path lesson = test::scratch_dir() / "wait.json";
  std::ofstream(lesson) << R"({"title": "wait", "settings": {"dataset": "spiral", "hidden": [8], "batch": 16},
                               "steps": [{"at": 0.5, "caption": "up"}, {"at": 120, "quit": 0}]})";
  const char* old = std::getenv("DISPLAY");
  const std::string saved = old ? old : "";
  ::setenv("DISPLAY", display.c_str(), 1);
  const auto cli = test::start_cli({"dashboard", "--backend", "cpu", "--max-fps", "10", "--script", lesson.string()});
  if (old)
    ::setenv("DISPLAY", saved.c_str(), 1);
  else
    ::unsetenv("DISPLAY");
  // The window is up and drawing once the lesson's first step has run in its frame loop (not a fixed 4 s sleep).
  bool drawing = false;
  for (int i = 0; i < 1200 && !drawing; ++i) {
    drawing = test::slurp(test::scratch_dir() / "stdout.txt").find("lesson: step 1 at") != std::string::npos;
    if (!drawing) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(drawing);
  ::kill(xvfb, SIGTERM);
  ::waitpid(xvfb, nullptr, 0);
  const test::Result r = test::finish_cli(cli);
  INFO("stderr: " << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("trainscope: error: lost the connection to the display " + display) != std::string::npos);
}
