// The doctest main shared by every test executable. It returns test::kSkipReturnCode (ctest: skipped) when no test
// failed but some test recorded a skip (tests/skip.hpp), so that a test that could not run never shows as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "skip.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  if (const int skipped = test::skip_count().load(); skipped > 0) {
    std::printf("[trainscope] %d skip%s recorded (see SKIPPED above): reported to ctest as skipped\n", skipped,
                skipped == 1 ? "" : "s");
    return test::kSkipReturnCode;
  }
  return 0;
}
