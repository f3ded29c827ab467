// Settings as JSON (nlohmann-json): reading with per-field type checks (from a capped regular file, core/files),
// atomic writing (core::write_file_atomically), and the hand-over of ImGui's layout.
#include "ui/settings.hpp"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>
#include <type_traits>

#include "core/error.hpp"
#include "core/files.hpp"
#include "platform/folders.hpp"
#include "platform/system.hpp"

namespace ui {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kVersion = 1;

struct Corrupt {
  std::string why;
};

// A JSON type's name with its article, as a sentence says it: "an array", "a number", "null".
std::string json_kind(const json& j) {
  const std::string name = j.type_name();
  if (name == "null") return name;
  return (name == "array" || name == "object" ? "an " : "a ") + name;
}

// The field `key` of `j` into `out` when present; throws Corrupt when it has another type.
template <typename T>
void read_field(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  bool ok = false;
  const char* expected = "a number";
  if constexpr (std::is_same_v<T, bool>) {
    ok = it->is_boolean();
    expected = "true or false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    ok = it->is_string();
    expected = "a string";
  } else if constexpr (std::is_integral_v<T>) {
    ok = it->is_number_integer();
    expected = "a whole number";
  } else {
    ok = it->is_number();
  }
  if (!ok) throw Corrupt{fmt::format("\"{}\" is {}, expected {}", key, json_kind(*it), expected)};
  out = it->get<T>();
}

Settings from_json(const json& j) {
  if (!j.is_object()) throw Corrupt{fmt::format("the top level is {}, not an object", json_kind(j))};
  Settings s;
  read_field(j, "font_size", s.font_size);
  read_field(j, "presentation", s.presentation);
  if (auto it = j.find("window"); it != j.end()) {
    if (!it->is_object()) throw Corrupt{fmt::format("\"window\" is {}, expected an object", json_kind(*it))};
    long long width = s.window_width, height = s.window_height;  // wide: a huge number is clamped, not wrapped
    read_field(*it, "width", width);
    read_field(*it, "height", height);
    s.window_width = static_cast<int>(std::clamp(width, 320LL, 16384LL));
    s.window_height = static_cast<int>(std::clamp(height, 240LL, 16384LL));
  }
  read_field(j, "tab", s.tab);
  read_field(j, "plot_x_axis", s.plot_x_axis);
  read_field(j, "imgui_layout", s.imgui_layout);
  // Out-of-range values are not corruption (an edited file): bring them back into range.
  if (!(s.font_size == s.font_size)) s.font_size = Settings{}.font_size;
  s.font_size = std::clamp(s.font_size, kMinFontSize, kMaxFontSize);
  return s;
}

json to_json(const Settings& s) {
  return json{{"version", kVersion},
              {"font_size", s.font_size},
              {"presentation", s.presentation},
              {"window", {{"width", s.window_width}, {"height", s.window_height}}},
              {"tab", s.tab},
              {"plot_x_axis", s.plot_x_axis},
              {"imgui_layout", s.imgui_layout}};
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  const std::tm tm = platform::local_time(now);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

// Sets a corrupt file aside (never deletes it: the user may want to repair it). Returns the warning.
std::string set_aside(const fs::path& path, const std::string& why) {
  fs::path aside = path;
  aside += ".corrupt-" + timestamp();
  std::error_code ec;
  for (int n = 2; fs::exists(aside, ec) && n < 100; ++n) {
    aside = path;
    aside += fmt::format(".corrupt-{}-{}", timestamp(), n);
  }
  fs::rename(path, aside, ec);
  if (ec)
    return fmt::format("settings file {} is corrupt ({}) and could not be set aside ({}); using the defaults",
                       path.string(), why, ec.message());
  return fmt::format("settings file {} is corrupt ({}); moved it to {} and using the defaults", path.string(), why,
                     aside.string());
}

}  // namespace

fs::path default_settings_path() {
  const fs::path dir = platform::user_config_dir();
  return dir.empty() ? dir : dir / "trainscope" / "settings.json";
}

Settings parse_settings(std::string_view text, std::string& why) {
  why.clear();
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  try {
    if (j.is_discarded()) throw Corrupt{"not valid JSON"};
    return from_json(j);
  } catch (const Corrupt& c) {
    why = c.why;
    return Settings{};
  }
}

LoadedSettings load_settings(const fs::path& path) noexcept {
  LoadedSettings loaded;
  try {
    std::error_code ec;
    if (path.empty() || fs::status(path, ec).type() == fs::file_type::not_found) return loaded;
    // Only a regular file of at most 1 MiB: a FIFO, a device or a directory is refused without reading (or
    // blocking on) it, and such a file is not "corrupt", so it is not set aside either.
    std::string text;
    try {
      text = core::read_regular_file(path.string(), core::kMaxSmallFileBytes, "settings file");
    } catch (const core::Error& e) {
      loaded.warning = fmt::format("{}; using the defaults", e.what());
      return loaded;
    }
    std::string why;
    loaded.settings = parse_settings(text, why);
    if (!why.empty()) loaded.warning = set_aside(path, why);
  } catch (const std::exception& e) {
    loaded.settings = Settings{};
    loaded.warning = fmt::format("cannot read settings file {} ({}); using the defaults", path.string(), e.what());
  }
  return loaded;
}

std::string save_settings(const Settings& settings, const fs::path& path) noexcept {
  try {
    if (path.empty()) return fmt::format("cannot save settings: no settings path ({})", platform::why_no_config_dir());
    const std::string data = to_json(settings).dump(2) + "\n";
    std::error_code ec;
    if (path.has_parent_path()) {
      fs::create_directories(path.parent_path(), ec);
      if (ec)
        return fmt::format("cannot save settings: cannot create {}: {}", path.parent_path().string(), ec.message());
    }
    core::write_file_atomically(path.string(), data, "the settings");
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

void apply_imgui_layout(const Settings& settings) {
  if (!settings.imgui_layout.empty())
    ImGui::LoadIniSettingsFromMemory(settings.imgui_layout.data(), settings.imgui_layout.size());
}

void capture_imgui_layout(Settings& settings) {
  size_t size = 0;
  const char* ini = ImGui::SaveIniSettingsToMemory(&size);
  settings.imgui_layout.assign(ini, size);
}

}  // namespace ui
