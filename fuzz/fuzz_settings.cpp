// libFuzzer target: ui::parse_settings, the dashboard's settings file parser. Any text gives settings within their
// documented ranges (font size, window size), and the defaults whenever a reason is given. Seeds:
// fuzz/corpus/settings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ui/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  const ui::Settings s = ui::parse_settings(text, why);
  if (!(s.font_size >= ui::kMinFontSize && s.font_size <= ui::kMaxFontSize)) std::abort();
  if (s.window_width < 320 || s.window_width > 16384 || s.window_height < 240 || s.window_height > 16384)
    std::abort();
  if (!why.empty() && !(s == ui::Settings{})) std::abort();
  return 0;
}
