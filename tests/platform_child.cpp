// The child process of test_platform's run_reading_lines case: prints each argument after the program's name and
// then the variable TRAINSCOPE_PLATFORM_CHILD, one per line, and exits with 3 (a code the test checks).
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) std::printf("%s\n", argv[i]);
  const char* v = std::getenv("TRAINSCOPE_PLATFORM_CHILD");
  std::printf("%s\n", v ? v : "(unset)");
  return 3;
}
