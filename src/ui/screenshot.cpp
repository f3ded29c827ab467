// PNG writing (stb_image_write encodes into memory, core::write_file_atomically writes it), screenshot file names,
// and the footer bar.
#include "ui/screenshot.hpp"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "platform/system.hpp"

// The implementation lives here, static, so it cannot clash with a libstb linked by another dependency.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

namespace ui {

namespace fs = std::filesystem;

namespace {

// stb's encoder hands the PNG over in chunks; they are collected in memory and written in one go.
void append_chunk(void* context, void* data, int size) {
  if (size > 0) static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

std::string local_time(const char* format) {
  std::time_t now = std::time(nullptr);
  const std::tm tm = platform::local_time(now);
  char text[64];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

}  // namespace

std::string write_png(const Image& image, const std::string& path) noexcept {
  try {
    if (image.empty())
      return fmt::format("cannot write {}: the screenshot is empty ({}x{}, {} bytes)", path, image.width, image.height,
                         image.rgba.size());
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path() && !fs::is_directory(target.parent_path(), ec)) {
      fs::create_directories(target.parent_path(), ec);
      if (ec)
        return fmt::format("cannot create the folder {} for the screenshot: {}", target.parent_path().string(),
                           ec.message());
    }
    std::string png;
    if (!stbi_write_png_to_func(append_chunk, &png, image.width, image.height, 4, image.rgba.data(), image.width * 4))
      return fmt::format("cannot write {}: the PNG encoder ran out of memory", path);
    // Atomic: a kill or a full disk while writing leaves the previous screenshot as it was.
    core::write_file_atomically(path, png, "the screenshot");
    return "";
  } catch (const core::Error& e) {  // the message names the file, the reason and what to do
    return e.what();
  } catch (const std::exception& e) {  // bad_alloc from a path or a message
    return std::string("cannot write the screenshot: ") + e.what();
  }
}

std::string timestamped_path(const std::string& folder, const std::string& suffix) {
  const std::string stem = "trainscope-" + local_time("%Y%m%d-%H%M%S");
  std::error_code ec;
  fs::path path = fs::path(folder) / (stem + suffix);
  for (int n = 2; fs::exists(path, ec) && n < 1000; ++n)
    path = fs::path(folder) / fmt::format("{}-{}{}", stem, n, suffix);
  return path.string();
}

std::string default_screenshot_path(const std::string& folder) { return timestamped_path(folder, ".png"); }

SavedScreenshot save_screenshot(const Image& image, const std::string& path) noexcept {
  SavedScreenshot saved;
  try {
    saved.path = path.empty() ? default_screenshot_path() : path;
  } catch (const std::exception& e) {
    saved.error = std::string("cannot choose a screenshot file name: ") + e.what();
    return saved;
  }
  saved.error = write_png(image, saved.path);
  return saved;
}

std::string footer_text(const FooterInfo& info) {
  std::string text = "trainscope";
  for (const std::string* part : {&info.devices, &info.model, &info.batch, &info.precision, &info.machine})
    if (!part->empty()) text += " | " + *part;
  return text + " | " + local_time("%Y-%m-%d %H:%M");
}

namespace {
thread_local bool footer_frame = false;
}  // namespace

bool in_footer_frame() { return footer_frame; }

DrawFn with_footer(DrawFn draw, std::string text) {
  return [draw = std::move(draw), text = std::move(text)] {
    if (draw) {
      footer_frame = true;
      try {
        draw();
      } catch (...) {
        footer_frame = false;
        throw;
      }
      footer_frame = false;
    }
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImDrawList* list = ImGui::GetForegroundDrawList();
    // Smaller than the panels' text (a caption, not content), but never below legibility.
    float size = std::max(12.0f, 0.75f * ImGui::GetFontSize());
    const float room = viewport->Size.x - 0.8f * size * 2;
    auto width = [&](const std::string& t, float at) {
      return ImGui::GetFont()->CalcTextSizeA(at, FLT_MAX, 0.0f, t.c_str()).x;
    };
    // A footer too long for one line at that size goes on two, split at the " | " nearest its middle (the back row
    // reads it at the same size); only what two lines cannot hold is set smaller, never cut at the right edge.
    std::vector<std::string> lines = {text};
    if (width(text, size) > room) {
      size_t best = std::string::npos;
      for (size_t at = text.find(" | "); at != std::string::npos; at = text.find(" | ", at + 1))
        if (best == std::string::npos || std::abs(static_cast<double>(at) - text.size() / 2.0) <
                                             std::abs(static_cast<double>(best) - text.size() / 2.0))
          best = at;
      if (best != std::string::npos) lines = {text.substr(0, best), text.substr(best + 3)};
    }
    float natural = 0;
    for (const auto& l : lines) natural = std::max(natural, width(l, size));
    if (natural > room && natural > 0) size = std::max(12.0f, size * room / natural);
    const float pad = 0.4f * size;
    const float height = size * static_cast<float>(lines.size()) + 2 * pad;
    const ImVec2 min(viewport->Pos.x, viewport->Pos.y + viewport->Size.y - height);
    const ImVec2 max(viewport->Pos.x + viewport->Size.x, viewport->Pos.y + viewport->Size.y);
    // Near-black with white text in both styles: reads on a slide whatever the theme around it.
    list->AddRectFilled(min, max, IM_COL32(16, 16, 16, 235));
    for (size_t i = 0; i < lines.size(); ++i)
      list->AddText(ImGui::GetFont(), size, ImVec2(min.x + 2 * pad, min.y + pad + size * static_cast<float>(i)),
                    IM_COL32(255, 255, 255, 255), lines[i].c_str());
  };
}

}  // namespace ui
