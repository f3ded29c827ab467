// ui::Settings: JSON round trip, atomic writes (no temporary file left), corrupt files set aside with a warning,
// missing files, out-of-range values, unwritable folders, the XDG path; settings paths that are not regular files
// (FIFO, device, directory, too large) and symlinks kept on save.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ui/settings.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("trainscope-test-settings-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

ui::Settings custom() {
  ui::Settings s;
  s.font_size = 27;
  s.presentation = true;
  s.window_width = 1920;
  s.window_height = 1080;
  s.tab = "memory";
  s.plot_x_axis = "time";
  s.imgui_layout = "[Window][Loss]\nPos=10,20\nSize=600,400\nCollapsed=0\n\n[Window][Kernels \"quoted\"]\nPos=0,0\n";
  return s;
}

}  // namespace

TEST_CASE("settings: what is saved is what is loaded") {
  fs::path dir = temp_dir("roundtrip");
  fs::path file = dir / "trainscope" / "settings.json";  // the folder is created
  REQUIRE(ui::save_settings(custom(), file) == "");
  ui::LoadedSettings loaded = ui::load_settings(file);
  CHECK(loaded.warning == "");
  CHECK(loaded.settings == custom());
  CHECK(loaded.settings.style().font_size == 27);
  CHECK(loaded.settings.style().presentation);
  fs::remove_all(dir);
}

TEST_CASE("settings: saving replaces the file atomically and leaves no temporary file") {
  fs::path dir = temp_dir("atomic");
  fs::path file = dir / "settings.json";
  REQUIRE(ui::save_settings(ui::Settings{}, file) == "");
  REQUIRE(ui::save_settings(custom(), file) == "");  // over an existing file
  CHECK(files_in(dir) == std::vector<std::string>{"settings.json"});
  CHECK(ui::load_settings(file).settings == custom());
  fs::remove_all(dir);
}

TEST_CASE("settings: a corrupt file is set aside with a warning and the defaults are used") {
  const std::vector<std::string> corrupt = {
      "{ \"font_size\": 20, ",              // truncated: a crash in another program's non-atomic write
      "",                                   // empty
      "[1, 2, 3]",                          // not an object
      "{\"font_size\": \"large\"}",         // wrong type
      "{\"tab\": 5}",                      // wrong type
      "{\"window\": 5}",
  };
  for (const auto& text : corrupt) {
    CAPTURE(text);
    fs::path dir = temp_dir("corrupt");
    fs::path file = dir / "settings.json";
    write(file, text);
    ui::LoadedSettings loaded = ui::load_settings(file);
    CHECK(loaded.settings == ui::Settings{});
    CHECK(loaded.warning.find("corrupt") != std::string::npos);
    CHECK_FALSE(fs::exists(file));
    auto names = files_in(dir);
    REQUIRE(names.size() == 1);
    CHECK(names[0].rfind("settings.json.corrupt-", 0) == 0);
    CHECK(loaded.warning.find(names[0]) != std::string::npos);
    CHECK(read(dir / names[0]) == text);                    // kept for the user, byte for byte
    CHECK(ui::save_settings(loaded.settings, file) == "");  // and a fresh file can be written
    fs::remove_all(dir);
  }
}

TEST_CASE("settings: a wrong type is named in plain English with what was expected") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"font_size\": [20]}", "\"font_size\" is an array, expected a number"},
      {"{\"window\": {\"width\": 1.5}}", "\"width\" is a number, expected a whole number"},
      {"{\"tab\": 5}", "\"tab\" is a number, expected a string"},
      {"{\"presentation\": null}", "\"presentation\" is null, expected true or false"},
      {"[1, 2, 3]", "the top level is an array, not an object"},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    fs::path dir = temp_dir("kind");
    write(dir / "settings.json", text);
    const ui::LoadedSettings loaded = ui::load_settings(dir / "settings.json");
    CHECK(loaded.warning.find(message) != std::string::npos);
    fs::remove_all(dir);
  }
}

TEST_CASE("settings: a missing file gives the defaults, silently, and creates nothing") {
  fs::path dir = temp_dir("missing");
  ui::LoadedSettings loaded = ui::load_settings(dir / "nope" / "settings.json");
  CHECK(loaded.warning == "");
  CHECK(loaded.settings == ui::Settings{});
  CHECK(files_in(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("settings: out-of-range values are clamped, unknown fields ignored, missing fields defaulted") {
  fs::path dir = temp_dir("range");
  fs::path file = dir / "settings.json";
  write(file, R"({"version": 7, "font_size": 500, "window": {"width": 99999999999, "height": 10},
                  "future_field": {"x": 1}, "panels": {"loss": false}})");
  ui::LoadedSettings loaded = ui::load_settings(file);
  CHECK(loaded.warning == "");
  CHECK(loaded.settings.font_size == ui::kMaxFontSize);
  CHECK(loaded.settings.window_width == 16384);
  CHECK(loaded.settings.window_height == 240);
  CHECK(loaded.settings.tab == "controls");  // "panels" (an older version's field) is ignored
  CHECK(loaded.settings.plot_x_axis == "step");
  CHECK(fs::exists(file));
  fs::remove_all(dir);
}

TEST_CASE("settings: an unwritable place gives a message, not an exception") {
  fs::path dir = temp_dir("unwritable");
  write(dir / "plain-file", "x");
  std::string error;
  CHECK_NOTHROW(error = ui::save_settings(custom(), dir / "plain-file" / "trainscope" / "settings.json"));
  CHECK(error.find("cannot save settings") != std::string::npos);
  CHECK(ui::save_settings(custom(), fs::path{}).find("no settings path") != std::string::npos);
  CHECK(files_in(dir) == std::vector<std::string>{"plain-file"});
  fs::remove_all(dir);
}

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

TEST_CASE("settings: a path that is not a regular file gives the defaults and says what it is, without blocking") {
  fs::path dir = temp_dir("not-regular");
  // A directory: before the fix reported as "not valid JSON".
  fs::create_directories(dir / "folder.json");
  ui::LoadedSettings loaded = ui::load_settings(dir / "folder.json");
  CHECK(loaded.settings == ui::Settings{});
  CHECK(loaded.warning.find("is a directory") != std::string::npos);
  CHECK(fs::is_directory(dir / "folder.json"));  // not set aside as "corrupt"
  // A symlink to /dev/zero: before the fix, memory grew without bound.
  fs::create_symlink("/dev/zero", dir / "zero.json");
  loaded = ui::load_settings(dir / "zero.json");
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
  // Larger than 1 MiB: refused, not parsed.
  write(dir / "huge.json", "{\"imgui_layout\": \"" + std::string(1100000, 'x') + "\"}");
  loaded = ui::load_settings(dir / "huge.json");
  CHECK(loaded.warning.find("larger than the 1048576 bytes") != std::string::npos);
  CHECK(fs::exists(dir / "huge.json"));
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
  CHECK(files_in(dir / "dotfiles") == std::vector<std::string>{"trainscope.json"});
  fs::remove_all(dir);
}
