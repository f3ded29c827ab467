// Honest skips: a test case (or part of one) that cannot run here says why and records it; the doctest main then
// exits with kSkipReturnCode when nothing failed, and ctest reports the test as skipped instead of passed.
// Only a missing prerequisite of the machine may skip (no Vulkan device at all, no display tool): anything else that
// goes wrong while setting a test up is a failure.
#pragma once
#include <doctest/doctest.h>

#include <atomic>
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

}  // namespace test
