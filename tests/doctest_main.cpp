// The doctest main shared by every test executable. It returns test::kSkipReturnCode (ctest: skipped) when no test
// failed but some test recorded a skip (tests/skip.hpp), so that a test that could not run never shows as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "skip.hpp"

#ifdef TRAINSCOPE_KEEP_LIBRARIES_LOADED
// Sanitizer runs only (scripts/test --sanitize/--tsan configure TRAINSCOPE_SANITIZER_RUN): dlclose does nothing, so
// that libraries the Vulkan loader opens and closes (the driver, LLVM, the X11 stack) stay mapped until exit. A leak
// report then names the library that allocated (and the suppressions in scripts/sanitizers/ can match it) instead of
// "<unknown module>", and TSan does not abort when a library its suppressions name is unloaded. Defined in the
// executable, this dlclose takes the place of libc's for every shared library (ELF symbol interposition).
extern "C" int dlclose(void*) { return 0; }
#endif

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
