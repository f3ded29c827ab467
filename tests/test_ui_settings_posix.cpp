// ui::Settings where only POSIX can make the case: the XDG path, a FIFO or a character device as the settings file,
// and a symlink kept on save (a Windows build lists this file as a disabled test, with that reason; the rest of the
// settings' cases, test_ui_settings.cpp, run there too).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "file_test_util.hpp"
#include "ui/settings.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) { return test::scratch("trainscope-test-settings-posix", name); }

ui::Settings custom() {
  ui::Settings s;
  s.font_size = 27;
  s.tab = "memory";
  return s;
}

}  // namespace

TEST_CASE("settings: the default path follows XDG_CONFIG_HOME, else ~/.config") {
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const char* old_home = std::getenv("HOME");
  std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_CONFIG_HOME", "/tmp/xdg", 1);
  setenv("HOME", "/home/teacher", 1);
  CHECK(ui::default_settings_path() == fs::path("/tmp/xdg/trainscope/settings.json"));
  setenv("XDG_CONFIG_HOME", "relative/ignored", 1);
  CHECK(ui::default_settings_path() == fs::path("/home/teacher/.config/trainscope/settings.json"));
  unsetenv("XDG_CONFIG_HOME");
  CHECK(ui::default_settings_path() == fs::path("/home/teacher/.config/trainscope/settings.json"));
  unsetenv("HOME");
  CHECK(ui::default_settings_path().empty());
  if (old_xdg) setenv("XDG_CONFIG_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE(
    "settings: a device or a FIFO as the settings path gives the defaults and says what it is, without blocking") {
  fs::path dir = temp_dir("not-regular");
  // A symlink to /dev/zero: before the fix, memory grew without bound.
  fs::create_symlink("/dev/zero", dir / "zero.json");
  ui::LoadedSettings loaded = ui::load_settings(dir / "zero.json");
  CHECK(loaded.settings == ui::Settings{});
  CHECK(loaded.warning.find("is a character device") != std::string::npos);
  CHECK(fs::is_symlink(dir / "zero.json"));
  // A FIFO: before the fix, start-up blocked for ever. On a thread, so that a regression fails instead of hanging.
  const fs::path fifo = dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pending = std::async(std::launch::async, [&] { return ui::load_settings(fifo); });
  if (pending.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    FAIL_CHECK("load_settings blocked on a FIFO");
    // A writer that comes and goes releases the blocked open(); its read() then sees the end of the file.
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    pending.wait();
  }
  loaded = pending.get();
  CHECK(loaded.settings == ui::Settings{});
  CHECK(loaded.warning.find("is a FIFO") != std::string::npos);
  CHECK(fs::is_fifo(fifo));
  fs::remove_all(dir);
}

TEST_CASE("settings: saving through a symlink keeps the link and replaces its target") {
  fs::path dir = temp_dir("symlink");
  fs::create_directories(dir / "dotfiles");
  REQUIRE(ui::save_settings(ui::Settings{}, dir / "dotfiles" / "trainscope.json") == "");
  fs::create_symlink(dir / "dotfiles" / "trainscope.json", dir / "settings.json");
  REQUIRE(ui::save_settings(custom(), dir / "settings.json") == "");
  CHECK(fs::is_symlink(dir / "settings.json"));
  CHECK(ui::load_settings(dir / "dotfiles" / "trainscope.json").settings == custom());
  CHECK(test::files_in(dir / "dotfiles") == std::vector<std::string>{"trainscope.json"});
  fs::remove_all(dir);
}
