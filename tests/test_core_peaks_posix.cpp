// Device peaks where only POSIX can make the case: the cache's folder from XDG_CACHE_HOME, its lock held by another
// open file (flock) and its holder named from /proc/locks, a symlink or another user's file as the cache (a Windows
// build lists this file as a disabled test with that reason; test_core_peaks.cpp runs there too).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "core/peaks.hpp"
#include "peaks_test_util.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using test::cpu_peaks;
using test::gpu_peaks;
using test::TempDir;

TEST_CASE("the cache lives under XDG_CACHE_HOME, else ~/.cache; a relative XDG_CACHE_HOME is ignored") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  CHECK(core::default_peaks_path() == fs::path("/tmp/xdg-cache/trainscope/peaks.json"));
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  ::setenv("HOME", "/home/teacher", 1);
  CHECK(core::default_peaks_path() == fs::path("/home/teacher/.cache/trainscope/peaks.json"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  CHECK(core::default_peaks_path().empty());
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE("the cache's lock held elsewhere: saving gives up after LockWait's seconds, naming the lock and its holder") {
  TempDir dir;
  const fs::path path = dir.path / "peaks.json";
  core::save_peaks(path, cpu_peaks());
  CHECK(core::LockWait{}.seconds <= 30);  // issue 25: never a wait for ever (flock ... sleep 120 blocked train)
  // Another holder: a second open file description of the lock (flock conflicts between them, even in one process).
  const int holder = ::open((path.string() + ".lock").c_str(), O_RDWR);
  REQUIRE(holder >= 0);
  REQUIRE(::flock(holder, LOCK_EX) == 0);
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  try {
    core::save_peaks(path, gpu_peaks("vulkan:dd:1"), core::LockWait{0.3, {}});
  } catch (const core::Error& e) {
    why = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 0.3);
  CHECK(waited < 5);
  CHECK(why.find(path.string() + ".lock") != std::string::npos);
  CHECK(why.find(fmt::format("held by process {} (", ::getpid())) != std::string::npos);  // from /proc/locks
  CHECK(why.find("not cached") != std::string::npos);
  // A cancel (a SIGINT in train) ends the wait at once instead of after the seconds.
  const auto cancel_start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(core::save_peaks(path, gpu_peaks("vulkan:dd:1"), core::LockWait{30, [] { return true; }}),
                       doctest::Contains("stopped waiting"), core::Error);
  CHECK(std::chrono::steady_clock::now() - cancel_start < std::chrono::seconds(5));
  ::close(holder);
  core::save_peaks(path, gpu_peaks("vulkan:dd:1"));  // released: saved, the earlier entry kept
  CHECK(core::load_peaks_cache(path).size() == 2);
}

TEST_CASE("a peaks cache that is a symlink, or another user's, is never replaced: the file and its entries stay") {
  TempDir dir;
  const fs::path notes = dir.path / "notes.txt", path = dir.path / "peaks.json";
  { std::ofstream(notes) << "a teacher's notes"; }
  fs::create_symlink(notes, path);
  std::string warning;
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK(warning.find("symlink") != std::string::npos);
  CHECK(warning.find("peaks cache " + path.string() + ": peaks cache") == std::string::npos);  // said once
  CHECK_THROWS_WITH_AS(core::save_peaks(path, cpu_peaks()), doctest::Contains("symlink"), core::Error);
  std::ifstream in(notes);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "a teacher's notes");

  const fs::path theirs = dir.path / "theirs" / "peaks.json";
  core::save_peaks(theirs, gpu_peaks("vulkan:ee:1"));
  fs::permissions(theirs, fs::perms::owner_read | fs::perms::owner_write);
  if (::chown(theirs.c_str(), 4242, 4242) != 0) {  // not root: a file cannot be given away, the case cannot run
    test::skip("another user's peaks cache", "giving a file to another user needs root (run the tests as root)");
    return;
  }
  CHECK_THROWS_WITH_AS(core::save_peaks(theirs, cpu_peaks()), doctest::Contains("belongs to another user"),
                       core::Error);
  CHECK(core::load_peaks_cache(theirs).size() == 1);  // before the fix: replaced, the other device's entry lost
  CHECK(core::find_cached_peaks(theirs, "vulkan:ee:1").has_value());
}
