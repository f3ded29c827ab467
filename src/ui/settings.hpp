// ui::Settings: what the dashboard remembers between runs (font size, presentation mode, window size, the view shown
// beside the plots, the plot's x-axis mode, ImGui's window layout), as JSON in $XDG_CONFIG_HOME/trainscope/settings.json
// (~/.config/trainscope/settings.json without XDG_CONFIG_HOME). Saving is atomic (temporary file + rename); a
// corrupt file is set aside as settings.json.corrupt-YYYYMMDD-HHMMSS and the defaults are used, with a warning;
// a settings path that is not a regular file (a FIFO, /dev/zero, a directory) gives the defaults and a warning.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "ui/style.hpp"

namespace ui {

struct Settings {
  float font_size = 18.0f;  // pixels, clamped to [kMinFontSize, kMaxFontSize] on load
  bool presentation = false;
  int window_width = 1600;  // screen coordinates, clamped to [320, 16384] on load
  int window_height = 900;
  std::string tab = "controls";        // the view beside the plots (ui::tab_name), by name
  std::string plot_x_axis = "step";    // the plot widget's x-axis mode, by name
  std::string imgui_layout;            // ImGui::SaveIniSettingsToMemory(): window positions and sizes

  StyleOptions style() const { return {font_size, presentation}; }
  bool operator==(const Settings&) const = default;
};

struct LoadedSettings {
  Settings settings;
  std::string warning;  // "" or what went wrong, for the user (the defaults are in `settings` then)
};

// $XDG_CONFIG_HOME/trainscope/settings.json when XDG_CONFIG_HOME is an absolute path, else
// $HOME/.config/trainscope/settings.json; empty when neither variable is set.
std::filesystem::path default_settings_path();

// The settings in `text` (a settings file's contents), with out-of-range values clamped and unknown fields ignored.
// Text that is not a JSON object, or has a field of the wrong type, gives the defaults and says why in `why` (e.g.
// "not valid JSON", "\"tab\" is a number"); `why` is empty otherwise. Throws only std::bad_alloc.
Settings parse_settings(std::string_view text, std::string& why);

// Reads `path`. A missing file gives the defaults and no warning. Only a regular file of at most 1 MiB is read
// (core::read_regular_file): a FIFO, a device, a directory or a larger file gives the defaults and a warning
// saying what it is, without blocking. A file that is not a JSON object or has a field of the wrong type is
// renamed to <path>.corrupt-YYYYMMDD-HHMMSS (the warning says so) and the defaults are used. Unknown fields are
// ignored (a newer trainscope may have written them). Never throws.
LoadedSettings load_settings(const std::filesystem::path& path) noexcept;

// Writes `settings` to `path` with core::write_file_atomically: a temporary file in the same folder, flushed to
// disk, then renamed over `path` (a symlink is kept and its target replaced), so a crash leaves the old or the new
// file, never half of one. Creates missing folders. Returns "" or an error message; the temporary file is removed
// on failure. Never throws.
std::string save_settings(const Settings& settings, const std::filesystem::path& path) noexcept;

// Hands the saved layout to ImGui (call after the Window is created, before its first frame).
void apply_imgui_layout(const Settings& settings);
// Stores ImGui's current layout into settings.imgui_layout (call before saving, while the Window exists).
void capture_imgui_layout(Settings& settings);

}  // namespace ui
