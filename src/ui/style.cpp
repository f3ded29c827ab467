// Font atlas and colours of the dashboard: normal (ImGui's dark theme, scaled) and presentation (high contrast).
#include "ui/style.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "platform/process.hpp"

namespace ui {

namespace {

Fonts g_fonts;

// ImGui's default style is sized for its 13 px font; spacing scales with the text.
constexpr float kImGuiBaseFontSize = 13.0f;

// Latin-1, Greek (eta for the learning rate, mu for microseconds), punctuation (en dash, ellipsis), super- and
// subscripts, arrows, math operators (<=, x), box drawing and geometric shapes (play/pause triangles).
const ImWchar kTextGlyphs[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x205E, 0x2070, 0x209F, 0x2190,
                               0x21FF, 0x2200, 0x22FF, 0x2500, 0x257F, 0x25A0, 0x25FF, 0};
const ImWchar kNumberGlyphs[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x205E, 0};

ImFont* add_ttf(const std::string& file, float size, const ImWchar* glyphs) {
  std::string path = find_font_file(file);
  if (path.empty()) return nullptr;
  ImFontConfig config;
  // Horizontal oversampling sharpens small text; large text does not need it and it doubles the atlas width.
  config.OversampleH = size >= 24 ? 1 : 2;
  config.OversampleV = 1;
  return ImGui::GetIO().Fonts->AddFontFromFileTTF(path.c_str(), size, &config, glyphs);
}

void set_presentation_colors(ImGuiStyle& style) {
  ImGui::StyleColorsLight(&style);
  ImVec4* c = style.Colors;
  const ImVec4 black(0, 0, 0, 1), white(1, 1, 1, 1);
  const ImVec4 accent(0.05f, 0.25f, 0.70f, 1.0f);  // dark blue: 8.6:1 on white
  const ImVec4 light_accent(0.80f, 0.87f, 1.00f, 1.0f);
  c[ImGuiCol_Text] = black;
  c[ImGuiCol_TextDisabled] = ImVec4(0.33f, 0.33f, 0.33f, 1);  // about 7:1 on white
  c[ImGuiCol_WindowBg] = white;
  c[ImGuiCol_ChildBg] = white;
  c[ImGuiCol_PopupBg] = white;
  c[ImGuiCol_Border] = ImVec4(0.15f, 0.15f, 0.15f, 1);
  c[ImGuiCol_FrameBg] = ImVec4(0.93f, 0.93f, 0.93f, 1);
  c[ImGuiCol_FrameBgHovered] = light_accent;
  c[ImGuiCol_FrameBgActive] = ImVec4(0.70f, 0.80f, 1.00f, 1);
  c[ImGuiCol_TitleBg] = ImVec4(0.88f, 0.88f, 0.88f, 1);
  c[ImGuiCol_TitleBgActive] = light_accent;
  c[ImGuiCol_TitleBgCollapsed] = ImVec4(0.88f, 0.88f, 0.88f, 1);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.93f, 0.93f, 0.93f, 1);
  c[ImGuiCol_CheckMark] = accent;
  c[ImGuiCol_SliderGrab] = accent;
  c[ImGuiCol_SliderGrabActive] = black;
  c[ImGuiCol_Button] = light_accent;
  c[ImGuiCol_ButtonHovered] = ImVec4(0.65f, 0.77f, 1.00f, 1);
  c[ImGuiCol_ButtonActive] = ImVec4(0.50f, 0.65f, 0.95f, 1);
  c[ImGuiCol_Header] = light_accent;
  c[ImGuiCol_HeaderHovered] = ImVec4(0.65f, 0.77f, 1.00f, 1);
  c[ImGuiCol_HeaderActive] = ImVec4(0.50f, 0.65f, 0.95f, 1);
  c[ImGuiCol_Separator] = ImVec4(0.25f, 0.25f, 0.25f, 1);
  c[ImGuiCol_PlotLines] = accent;
  c[ImGuiCol_PlotHistogram] = ImVec4(0.75f, 0.30f, 0.00f, 1);  // dark orange, distinct from the blue
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.85f, 0.85f, 0.85f, 1);
  c[ImGuiCol_TableBorderStrong] = ImVec4(0.15f, 0.15f, 0.15f, 1);
  c[ImGuiCol_TableBorderLight] = ImVec4(0.55f, 0.55f, 0.55f, 1);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(0.95f, 0.95f, 0.95f, 1);
  style.WindowBorderSize = 2.0f;
  style.FrameBorderSize = 1.5f;
  style.ChildBorderSize = 1.5f;
  style.PopupBorderSize = 2.0f;
}

}  // namespace

float effective_font_size(const StyleOptions& options) {
  float size = std::clamp(options.font_size, kMinFontSize, kMaxFontSize);
  if (options.presentation) size = std::max(24.0f, size * kPresentationFactor);
  return std::round(size);
}

std::string find_font_file(const std::string& file) {
  std::vector<std::filesystem::path> dirs;
  // TRAINSCOPE_FONT_DIR: another folder with the DejaVu files (or an empty one, to test the fallback).
  if (const char* env = std::getenv("TRAINSCOPE_FONT_DIR"); env && *env) {
    dirs.emplace_back(env);
    static bool warned = false;  // said once, like every TRAINSCOPE_* value that cannot be used
    std::error_code ec;
    if (!warned && !std::filesystem::is_directory(dirs.back(), ec)) {
      warned = true;
      std::fprintf(stderr, "trainscope: warning: TRAINSCOPE_FONT_DIR=%s is not a folder; the built-in font is used\n",
                   env);
    }
  } else {
    dirs.emplace_back("/usr/share/fonts/truetype/dejavu");    // fonts-dejavu-core (Debian, Ubuntu)
    dirs.emplace_back("/usr/share/fonts/TTF");                // Arch
    dirs.emplace_back("/usr/share/fonts/dejavu-sans-fonts");  // Fedora
    if (const auto self = platform::executable_path(); !self.empty())
      dirs.push_back(self.parent_path() / "fonts");  // beside the executable: the Windows download
  }
  std::error_code ec;
  for (const auto& dir : dirs)
    if (std::filesystem::is_regular_file(dir / file, ec)) return (dir / file).string();
  return "";
}

void apply_style(const StyleOptions& options) {
  ImGuiIO& io = ImGui::GetIO();
  const float size = effective_font_size(options);
  io.Fonts->Clear();
  g_fonts = Fonts{};
  g_fonts.size = size;
  g_fonts.regular = add_ttf("DejaVuSans.ttf", size, kTextGlyphs);
  if (g_fonts.regular) {
    g_fonts.from_ttf = true;
    g_fonts.bold = add_ttf("DejaVuSans-Bold.ttf", size, kNumberGlyphs);
    g_fonts.mono = add_ttf("DejaVuSansMono.ttf", size, kNumberGlyphs);
    io.FontGlobalScale = 1.0f;
  } else {
    // ProggyClean is drawn for 13 px; scaling it blurs it a little, but a classroom can still read it.
    g_fonts.regular = io.Fonts->AddFontDefault();
    io.FontGlobalScale = size / kImGuiBaseFontSize;
  }
  if (!g_fonts.bold) g_fonts.bold = g_fonts.regular;
  if (!g_fonts.mono) g_fonts.mono = g_fonts.regular;
  io.FontDefault = g_fonts.regular;
  io.Fonts->Build();

  ImGuiStyle style;  // a fresh one: ScaleAllSizes multiplies, so it must not be applied twice
  if (options.presentation) {
    set_presentation_colors(style);
  } else {
    ImGui::StyleColorsDark(&style);
  }
  style.WindowRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.ScaleAllSizes(size / kImGuiBaseFontSize);
  // Padding and spacing grow with the type only up to a point: at 40-70 px they would take the room that the plots
  // need (ui/layout.hpp keeps the loss plot at 40% of the window at every font size).
  style.WindowPadding = ImVec2(std::min(style.WindowPadding.x, 20.0f), std::min(style.WindowPadding.y, 20.0f));
  style.ItemSpacing = ImVec2(std::min(style.ItemSpacing.x, 20.0f), std::min(style.ItemSpacing.y, 12.0f));
  ImGui::GetStyle() = style;
}

const Fonts& fonts() { return g_fonts; }

}  // namespace ui
