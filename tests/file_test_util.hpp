// Scratch folders and whole-file reads and writes for the tests of trainscope's file handling (test_core_files,
// test_core_output_policy, test_ui_settings); portable (Windows too).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "platform/files.hpp"

namespace test {

// A fresh, empty folder `prefix`_<pid>_`name` under the system's temporary folder (emptied if it existed).
inline std::filesystem::path scratch(const std::string& prefix, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(platform::process_id()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` as the whole file.
inline void put(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// The names in folder `dir`, sorted.
inline std::vector<std::string> files_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Makes `link` a symbolic link to `target`. Where this system cannot (libstdc++ on Windows has no create_symlink;
// Windows without the privilege), says so as a doctest message and returns false: the caller skips its link checks,
// visibly, instead of failing or passing them.
inline bool make_symlink(const std::filesystem::path& target, const std::filesystem::path& link) {
  std::error_code error;
  std::filesystem::create_symlink(target, link, error);
  if (error) MESSAGE("skipped the symlink checks: this system cannot make a symlink here (" << error.message() << ")");
  return !error;
}

// A scratch folder standing for "/" (a root for the budgets' /proc and /sys/fs/cgroup reads): put("/proc/meminfo",
// text) writes path/proc/meminfo, making its folders. Removed with everything in it when it goes.
struct FakeRoot {
  FakeRoot(const std::string& prefix, const std::string& name) : path(scratch(prefix, name)) {}
  ~FakeRoot() { std::filesystem::remove_all(path); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;
  void put(const std::string& file, const std::string& text) const {
    std::filesystem::create_directories((path / file.substr(1)).parent_path());
    std::ofstream(path / file.substr(1)) << text;
  }
  std::filesystem::path path;
};

}  // namespace test
