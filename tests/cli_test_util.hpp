// Running the trainscope executable from a test as a user would: stdout and stderr captured, the exit code, and the
// check that bad input gives exit code 2 with one line naming the option. TRAINSCOPE_BINARY names the executable
// (set by ctest).
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
  long max_rss_kb = 0;  // the process's peak resident memory (getrusage's ru_maxrss)
};

// A scratch folder of this test process (removed by nobody: under the system's temporary folder).
inline fs::path scratch_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("trainscope_test_cli_" + std::to_string(getpid()));
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
    ::setenv("XDG_CACHE_HOME", path.c_str(), 1);
  }
  ~CacheHome() {
    if (saved)
      ::setenv("XDG_CACHE_HOME", saved->c_str(), 1);
    else
      ::unsetenv("XDG_CACHE_HOME");
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

// Starts the binary with `args`, stdout and stderr going to files (no shell, no quoting); returns its pid.
// `stdout_path`: where standard output goes instead of the scratch file (e.g. /dev/full); then Result::out is "".
inline pid_t start_cli(const std::vector<std::string>& args, const std::string& stdout_path = "") {
  const char* binary = std::getenv("TRAINSCOPE_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "set TRAINSCOPE_BINARY to the trainscope executable (ctest does)");
  const std::string out_path = stdout_path.empty() ? (scratch_dir() / "stdout.txt").string() : stdout_path;
  if (!stdout_path.empty()) std::ofstream(scratch_dir() / "stdout.txt", std::ios::trunc);
  const std::string err_path = (scratch_dir() / "stderr.txt").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   stdout_path.empty() ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv{const_cast<char*>(binary)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "cannot start " << binary);
  return pid;
}

// Waits for the process start_cli started; a death by a signal reads as 128 + the signal, as in a shell.
inline Result finish_cli(pid_t pid) {
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  Result r;
  r.max_rss_kb = usage.ru_maxrss;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(scratch_dir() / "stdout.txt");
  r.err = slurp(scratch_dir() / "stderr.txt");
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
