// Printing for the commands that never throws: fmt::print throws std::system_error when a write fails (a full disk
// under `> file`, a closed pipe), which would abandon the report and every other output half-way, or end a worker
// thread. say() formats, writes with stdio and remembers the first failure on standard output; main() checks it (and
// stdio's error flag) at the end: "cannot write to standard output: No space left on device", exit 1.
#pragma once
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string_view>

namespace app {

// The errno of the first failed write to standard output, 0 while none failed.
inline std::atomic<int> stdout_write_error{0};

inline void put(std::FILE* f, std::string_view text) noexcept {
  if (text.empty()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() && f == stdout) {
    int expected = 0;
    stdout_write_error.compare_exchange_strong(expected, errno ? errno : EIO);
  }
}

// std::fflush that remembers a failure on standard output as put() does (its errno is lost otherwise).
inline void flush(std::FILE* f) noexcept {
  errno = 0;
  if (std::fflush(f) != 0 && f == stdout) {
    int expected = 0;
    stdout_write_error.compare_exchange_strong(expected, errno ? errno : EIO);
  }
}

template <typename... T>
void say(std::FILE* f, fmt::format_string<T...> format, T&&... args) {
  put(f, fmt::vformat(format, fmt::make_format_args(args...)));
}

template <typename... T>
void say(fmt::format_string<T...> format, T&&... args) {
  put(stdout, fmt::vformat(format, fmt::make_format_args(args...)));
}

}  // namespace app
