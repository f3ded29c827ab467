// platform/folders on POSIX systems: the XDG base directory spec (and xdg-user-dirs) on Linux and other Unix, the
// ~/Library folders on macOS (folders.hpp).
#include <cstdlib>
#include <fstream>
#include <string>

#include "platform/folders.hpp"

namespace fs = std::filesystem;

namespace platform {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The XDG base directory spec: a relative (or empty) XDG_*_HOME is invalid and must be ignored.
fs::path xdg_or_home(const char* variable, const char* under_home) {
  if (const std::string xdg = env(variable); !xdg.empty() && fs::path(xdg).is_absolute()) return xdg;
  if (const std::string home = env("HOME"); !home.empty()) return fs::path(home) / under_home;
  return {};
}

}  // namespace

#ifdef __APPLE__
fs::path user_config_dir() { return xdg_or_home("XDG_CONFIG_HOME", "Library/Application Support"); }
fs::path user_cache_dir() { return xdg_or_home("XDG_CACHE_HOME", "Library/Caches"); }
#else
fs::path user_config_dir() { return xdg_or_home("XDG_CONFIG_HOME", ".config"); }
fs::path user_cache_dir() { return xdg_or_home("XDG_CACHE_HOME", ".cache"); }
#endif

fs::path user_pictures_dir() {
  const std::string home = env("HOME");
  if (const std::string pictures = env("XDG_PICTURES_DIR"); fs::path(pictures).is_absolute()) return pictures;
  // xdg-user-dirs' file: lines XDG_PICTURES_DIR="$HOME/Pictures" (its own format: a quoted path, $HOME expanded).
  const std::string config = env("XDG_CONFIG_HOME");
  const fs::path dirs = fs::path(config).is_absolute() ? fs::path(config) / "user-dirs.dirs"
                        : home.empty()                 ? fs::path()
                                                       : fs::path(home) / ".config" / "user-dirs.dirs";
  std::error_code ec;
  if (!dirs.empty() && fs::symlink_status(dirs, ec).type() == fs::file_type::regular) {
    std::ifstream in(dirs);
    for (std::string line; std::getline(in, line);) {
      const std::string key = "XDG_PICTURES_DIR=\"";
      if (line.rfind(key, 0) != 0 || line.size() < key.size() + 1 || line.back() != '"') continue;
      std::string value = line.substr(key.size(), line.size() - key.size() - 1);
      if (value.rfind("$HOME", 0) == 0) {
        if (home.empty()) break;
        value = home + value.substr(5);
      }
      if (fs::path(value).is_absolute() && value != home && value != home + "/") return value;
    }
  }
  if (home.empty()) return {};
  return fs::path(home) / "Pictures";
}

const char* why_no_cache_dir() { return "neither XDG_CACHE_HOME nor HOME is set"; }
const char* why_no_config_dir() { return "neither XDG_CONFIG_HOME nor HOME is set"; }

}  // namespace platform
