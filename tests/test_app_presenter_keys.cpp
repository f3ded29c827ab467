// The teacher's keys in the live window, as a presentation clicker sends them: 100 taps of 20 ms while the window
// draws only 2 frames a second (--max-fps 2, slow frames as on a loaded laptop) must move a lesson exactly 100 points
// (ImGui 1.86's polled key state saw about 5 of them); Q asks before quitting a lesson, Esc then quits. Under Xvfb
// with xdotool; skipped, and reported to ctest as such, when either or a Vulkan device is missing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gpu_test_util.hpp"

namespace {

namespace fs = std::filesystem;

bool have(const char* program) {
  return std::system(("command -v " + std::string(program) + " > /dev/null 2>&1").c_str()) == 0;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("100 taps of 20 ms between slow frames (--max-fps 2) move a lesson exactly 100 points; Q asks first") {
  if (!have("xvfb-run") || !have("xdotool")) {
    test::skip("the presenter keys", "xvfb-run or xdotool is not installed (apt-get install xvfb xauth xdotool)");
    return;
  }
  if (!test::vulkan_device_or_skip("the presenter keys")) return;
  const char* binary = std::getenv("TRAINSCOPE_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "set TRAINSCOPE_BINARY to the trainscope executable (ctest does)");
  const fs::path work = fs::temp_directory_path() / ("trainscope_test_presenter_keys_" + std::to_string(std::random_device{}()));
  fs::remove_all(work);
  fs::create_directories(work / "config");
  // 101 points: a caption, then 100 "next" steps, then a quit that waits for the teacher (a 101st next would end it).
  {
    std::ofstream lesson(work / "taps.json");
    lesson << R"({"title": "101 points", "settings": {"dataset": "spiral", "hidden": [16], "batch": 32},
                  "window": {"size": "1024x768"}, "steps": [{"caption": "Point 1."})";
    for (int i = 2; i <= 101; ++i) lesson << ",\n{\"next\": true, \"caption\": \"Point " << i << ".\"}";
    lesson << ",\n{\"quit\": true}]}\n";
  }
  // One xdotool command for all the taps: 20 ms down, 20 ms up, about 4 s in all; at 2 frames a second about 8 taps
  // begin and end between two frames. The exit code (in the file rc) says which check failed.
  std::string taps;
  for (int i = 0; i < 100; ++i) taps += " keydown space sleep 0.02 keyup space sleep 0.02";
  std::ofstream(work / "keys.sh") << "cd '" << work.string() << "'\n'" << binary
                                  << "' dashboard --script taps.json --max-fps 2 --output out > log 2>&1 &\n"
                                  << "pid=$!\n"
                                  << R"sh(finish() { echo "$1" > rc; [ "$1" = 0 ] || kill "$pid" 2> /dev/null; exit "$1"; }
wait_for() { for i in $(seq 1 "${2:-1200}"); do grep -q "$1" log && return 0; sleep 0.1; done; return 1; }
wait_for 'step 1 at' || finish 90
win=$(xdotool search --sync --name '^trainscope' | head -n 1)
xdotool windowfocus --sync "$win"
sleep 1
xdotool)sh" << taps << R"sh(
wait_for 'step 101 at' 300 || finish 91
sleep 2
kill -0 "$pid" || finish 92
xdotool key q
sleep 2
kill -0 "$pid" || finish 93
xdotool key Escape
wait "$pid"
finish $?
)sh";
  const std::string command = "XDG_CONFIG_HOME='" + (work / "config").string() + "' xvfb-run -a -f '" +
                              (work / "Xauthority").string() + "' -s '-screen 0 1024x768x24' sh '" +
                              (work / "keys.sh").string() + "' > '" + (work / "out.txt").string() + "' 2>&1";
  std::ofstream{work / "Xauthority"};  // xauth warns about a file that does not exist
  const int status = std::system(command.c_str());
  CAPTURE(status);
  const std::string log = slurp(work / "log");
  INFO(slurp(work / "out.txt"));
  INFO(log);
  // 90: no lesson; 91: fewer than 100 taps counted; 92: more (the 101st ended it); 93: Q quit without asking.
  CHECK(slurp(work / "rc") == "0\n");
  CHECK(log.find("step 101 at") != std::string::npos);
  CHECK(log.find("step 102 at") != std::string::npos);  // the quit step, waiting for the teacher
  CHECK(log.find("FAILED") == std::string::npos);
  fs::remove_all(work);
}
