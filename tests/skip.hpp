// Honest skips: a test case (or part of one) that cannot run here says why and records it; the doctest main then
// exits with kSkipReturnCode when nothing failed, and ctest reports the test as skipped instead of passed.
// Only a missing prerequisite of the machine may skip (no Vulkan device at all, no display tool): anything else that
// goes wrong while setting a test up is a failure.
#pragma once
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace test {

// ctest's SKIP_RETURN_CODE for every test (tests/CMakeLists.txt).
inline constexpr int kSkipReturnCode = 77;

inline std::atomic<int>& skip_count() {
  static std::atomic<int> count{0};
  return count;
}

// Records a skip and prints the reason as text (doctest 2.4.9's MESSAGE prints a `const char*` argument as a
// pointer, so every part goes through std::string).
inline void skip(const std::string& what, const std::string& why) {
  ++skip_count();
  const std::string text = "SKIPPED " + what + ": " + why;
  MESSAGE(text);
}

// For a test that runs trainscope through POSIX shell command lines (std::system with variable assignments,
// `timeout`, `xvfb-run`, redirections): why it cannot run here, or "" when it can. Either std::system runs no POSIX
// shell (the Windows build: cmd.exe, where `command -v xvfb-run` fails whether Xvfb is there or not), or one of
// `programs` is missing (`install` says how to get them).
inline std::string posix_shell_tools_missing(std::initializer_list<const char*> programs, const std::string& install) {
  if (std::system("test \"$((1 + 1))\" = 2 > /dev/null 2>&1") != 0)
    return "std::system runs no POSIX shell here (the Windows build runs cmd.exe), and this test drives trainscope "
           "through sh command lines with timeout and xvfb-run: not ported to Windows (docs/windows.md)";
  for (const char* program : programs)
    if (std::system(("command -v " + std::string(program) + " > /dev/null 2>&1").c_str()) != 0)
      return std::string(program) + " is not installed (" + install + ")";
  return "";
}

}  // namespace test
