// Running the trainscope executable from a test as a user would: stdout and stderr captured, the exit code, and the
// check that bad input gives exit code 2 with one line naming the option. TRAINSCOPE_BINARY names the executable
// (set by ctest).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "platform/files.hpp"
#include "platform/process.hpp"

namespace test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
  long max_rss_kb = 0;  // the process's peak resident memory (ru_maxrss; Windows: the peak working set)
};

// A scratch folder of this test process (removed by nobody: under the system's temporary folder).
inline fs::path scratch_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("trainscope_test_cli_" + std::to_string(platform::process_id()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Points XDG_CACHE_HOME at a fresh folder `name` of the scratch folder for the lifetime of the object (the spawned
// trainscope inherits it): a test's own peaks and pipeline caches, never the user's.
struct CacheHome {
  explicit CacheHome(const std::string& name) {
    path = scratch_dir() / name;
    fs::remove_all(path);
    fs::create_directories(path);
    const char* old = std::getenv("XDG_CACHE_HOME");
    saved = old ? std::optional<std::string>(old) : std::nullopt;
    platform::set_env("XDG_CACHE_HOME", path.string());
  }
  ~CacheHome() {
    if (saved)
      platform::set_env("XDG_CACHE_HOME", *saved);
    else
      platform::unset_env("XDG_CACHE_HOME");
  }
  CacheHome(const CacheHome&) = delete;
  CacheHome& operator=(const CacheHome&) = delete;
  fs::path cache_file() const { return path / "trainscope" / "peaks.json"; }
  fs::path path;
  std::optional<std::string> saved;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Text as the tests compare it: a Windows program's standard streams write "\r\n" for each "\n" (text mode).
inline std::string text_of(std::string s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (!(s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) s[w++] = s[i];
  s.resize(w);
  return s;
}

// A started trainscope (platform::Child: its id() is what a signal or kill takes).
using Cli = std::unique_ptr<platform::Child>;

// Starts the binary with `args`, stdout and stderr going to files (no shell, no quoting).
// `stdout_path`: where standard output goes instead of the scratch file (e.g. /dev/full); then Result::out is "".
inline Cli start_cli(const std::vector<std::string>& args, const std::string& stdout_path = "") {
  const char* binary = std::getenv("TRAINSCOPE_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "set TRAINSCOPE_BINARY to the trainscope executable (ctest does)");
  const fs::path out_path = stdout_path.empty() ? scratch_dir() / "stdout.txt" : fs::path(stdout_path);
  if (!stdout_path.empty()) std::ofstream(scratch_dir() / "stdout.txt", std::ios::trunc);
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  try {
    return std::make_unique<platform::Child>(binary, argv, out_path, scratch_dir() / "stderr.txt", stdout_path.empty());
  } catch (const std::exception& e) {
    FAIL("cannot start " << binary << ": " << e.what());
  }
  return nullptr;
}

// Waits for the process start_cli started.
inline Result finish_cli(const Cli& cli) {
  const platform::Child::Exit exit = cli->wait();
  Result r;
  r.max_rss_kb = static_cast<long>(exit.peak_memory_kb);
  r.code = exit.code;
  r.out = text_of(slurp(scratch_dir() / "stdout.txt"));
  r.err = text_of(slurp(scratch_dir() / "stderr.txt"));
  return r;
}

// Runs the binary with `args` to its end.
inline Result run_cli(const std::vector<std::string>& args, const std::string& stdout_path = "") {
  return finish_cli(start_cli(args, stdout_path));
}

inline std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Exit code 2 and exactly one line on stderr: "trainscope: error: ..." naming `mention`.
inline void check_bad_input(const std::vector<std::string>& args, const std::string& mention) {
  const Result r = run_cli(args);
  INFO("trainscope " << joined(args) << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("trainscope: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(mention) != std::string::npos);
}

}  // namespace test
