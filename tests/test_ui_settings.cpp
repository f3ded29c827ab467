// ui::Settings: JSON round trip, atomic writes (no temporary file left), corrupt files set aside with a warning,
// missing files, out-of-range values, unwritable folders, a folder or a too-large file as the settings path. What
// only POSIX can make (the XDG path, a FIFO or a device as the settings file, a symlink kept on save) is in
// test_ui_settings_posix.cpp; this file runs on Windows too.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "file_test_util.hpp"
#include "ui/settings.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) { return test::scratch("trainscope-test-settings", name); }

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
  CHECK(test::files_in(dir) == std::vector<std::string>{"settings.json"});
  CHECK(ui::load_settings(file).settings == custom());
  fs::remove_all(dir);
}

TEST_CASE("settings: a corrupt file is set aside with a warning and the defaults are used") {
  const std::vector<std::string> corrupt = {
      "{ \"font_size\": 20, ",       // truncated: a crash in another program's non-atomic write
      "",                            // empty
      "[1, 2, 3]",                   // not an object
      "{\"font_size\": \"large\"}",  // wrong type
      "{\"tab\": 5}",                // wrong type
      "{\"window\": 5}",
  };
  for (const auto& text : corrupt) {
    CAPTURE(text);
    fs::path dir = temp_dir("corrupt");
    fs::path file = dir / "settings.json";
    test::put(file, text);
    ui::LoadedSettings loaded = ui::load_settings(file);
    CHECK(loaded.settings == ui::Settings{});
    CHECK(loaded.warning.find("corrupt") != std::string::npos);
    CHECK_FALSE(fs::exists(file));
    auto names = test::files_in(dir);
    REQUIRE(names.size() == 1);
    CHECK(names[0].rfind("settings.json.corrupt-", 0) == 0);
    CHECK(loaded.warning.find(names[0]) != std::string::npos);
    CHECK(test::slurp(dir / names[0]) == text);             // kept for the user, byte for byte
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
    test::put(dir / "settings.json", text);
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
  CHECK(test::files_in(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("settings: out-of-range values are clamped, unknown fields ignored, missing fields defaulted") {
  fs::path dir = temp_dir("range");
  fs::path file = dir / "settings.json";
  test::put(file, R"({"version": 7, "font_size": 500, "window": {"width": 99999999999, "height": 10},
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
  test::put(dir / "plain-file", "x");
  std::string error;
  CHECK_NOTHROW(error = ui::save_settings(custom(), dir / "plain-file" / "trainscope" / "settings.json"));
  CHECK(error.find("cannot save settings") != std::string::npos);
  CHECK(ui::save_settings(custom(), fs::path{}).find("no settings path") != std::string::npos);
  CHECK(test::files_in(dir) == std::vector<std::string>{"plain-file"});
  fs::remove_all(dir);
}

TEST_CASE("settings: a folder or a file too large to be settings gives the defaults and says what it is") {
  const fs::path dir = test::scratch("trainscope-test-settings", "not-regular");
  // A directory: before the fix reported as "not valid JSON".
  fs::create_directories(dir / "folder.json");
  ui::LoadedSettings loaded = ui::load_settings(dir / "folder.json");
  CHECK(loaded.settings == ui::Settings{});
  CHECK(loaded.warning.find("is a directory") != std::string::npos);
  CHECK(fs::is_directory(dir / "folder.json"));  // not set aside as "corrupt"
  // Larger than 1 MiB: refused, not parsed.
  test::put(dir / "huge.json", "{\"imgui_layout\": \"" + std::string(1100000, 'x') + "\"}");
  loaded = ui::load_settings(dir / "huge.json");
  CHECK(loaded.warning.find("larger than the 1048576 bytes") != std::string::npos);
  CHECK(fs::exists(dir / "huge.json"));
  fs::remove_all(dir);
}
