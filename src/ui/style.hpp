// The dashboard's fonts and look: a font-size control and a presentation mode for classroom projectors (bigger
// text, dark text on white, thick borders). DejaVu Sans (Debian package fonts-dejavu-core) when installed, ImGui's
// built-in ProggyClean scaled up otherwise.
#pragma once
#include <string>

#include "core/options.hpp"

struct ImFont;

namespace ui {

// The font size's range, pixels (before the presentation-mode factor): the rule the command line's --font-size and a
// lesson's font_size check (core::rules::font_size), so that settings.json's clamp and the slider agree with them.
inline constexpr float kMinFontSize = static_cast<float>(core::rules::font_size.min);
inline constexpr float kMaxFontSize = static_cast<float>(core::rules::font_size.max);
inline constexpr float kPresentationFactor = 1.5f;

struct StyleOptions {
  float font_size = 18.0f;    // pixels (normal mode); clamped to [kMinFontSize, kMaxFontSize]
  bool presentation = false;  // large, high-contrast style for a projector in a lit room
};

// The font size actually rasterized, pixels: font_size clamped, times kPresentationFactor in presentation mode
// (at least 24 px there).
float effective_font_size(const StyleOptions& options);

// The fonts of the current dashboard. bold and mono are the regular font when their files are missing; from_ttf is
// false when ImGui's default font is used (scaled with io.FontGlobalScale).
struct Fonts {
  ImFont* regular = nullptr;
  ImFont* bold = nullptr;
  ImFont* mono = nullptr;  // aligned digits for timing tables
  bool from_ttf = false;
  float size = 0;  // effective_font_size() of the options applied
};

// Rebuilds the current ImGui context's font atlas (CPU side) and sets the style for `options`. Call between frames
// (never between ImGui::NewFrame and ImGui::Render: the atlas is locked then); the renderer must upload the atlas
// again afterwards (ui::ImGuiRenderer::set_style does both). Requires a current ImGui context.
void apply_style(const StyleOptions& options);

// The fonts built by the last apply_style(); valid while that ImGui context lives.
const Fonts& fonts();

// Where the DejaVu TTF `file` (e.g. "DejaVuSans.ttf") is installed, or "" when it is not.
std::string find_font_file(const std::string& file);

}  // namespace ui
