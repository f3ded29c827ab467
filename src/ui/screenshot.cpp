// PNG writing (through stb_image_write into our own FILE*, so that errno says why a write failed), screenshot file
// names, and the footer bar.
#include "ui/screenshot.hpp"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <system_error>

// The implementation lives here, static, so it cannot clash with a libstb linked by another dependency.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

namespace ui {

namespace fs = std::filesystem;

namespace {

struct PngSink {
  std::FILE* file = nullptr;
  int error = 0;  // errno of the first failed write
};

void write_chunk(void* context, void* data, int size) {
  auto* sink = static_cast<PngSink*>(context);
  if (sink->error != 0 || size <= 0) return;
  if (std::fwrite(data, 1, static_cast<size_t>(size), sink->file) != static_cast<size_t>(size))
    sink->error = errno != 0 ? errno : EIO;
}

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

std::string local_time(const char* format) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
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
    errno = 0;
    PngSink sink;
    sink.file = std::fopen(path.c_str(), "wb");
    if (!sink.file) return fmt::format("cannot write {}: {}", path, errno_text(errno != 0 ? errno : EIO));
    const int ok =
        stbi_write_png_to_func(write_chunk, &sink, image.width, image.height, 4, image.rgba.data(), image.width * 4);
    if (std::fflush(sink.file) != 0 && sink.error == 0) sink.error = errno != 0 ? errno : EIO;
    if (std::fclose(sink.file) != 0 && sink.error == 0) sink.error = errno != 0 ? errno : EIO;
    if (ok && sink.error == 0) return "";
    // Leave no half-written PNG behind (but never remove a device such as /dev/full).
    if (fs::is_regular_file(target, ec)) fs::remove(target, ec);
    if (!ok) return fmt::format("cannot write {}: the PNG encoder ran out of memory", path);
    return fmt::format("cannot write {}: {}", path, errno_text(sink.error));
  } catch (const std::exception& e) {  // bad_alloc from a path or a message
    return std::string("cannot write the screenshot: ") + e.what();
  }
}

std::string default_screenshot_path(const std::string& folder) {
  const std::string stem = "trainscope-" + local_time("%Y%m%d-%H%M%S");
  std::error_code ec;
  fs::path path = fs::path(folder) / (stem + ".png");
  for (int n = 2; fs::exists(path, ec) && n < 1000; ++n) path = fs::path(folder) / fmt::format("{}-{}.png", stem, n);
  return path.string();
}

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
  for (const std::string* part : {&info.devices, &info.model, &info.batch, &info.precision})
    if (!part->empty()) text += " | " + *part;
  return text + " | " + local_time("%Y-%m-%d %H:%M");
}

DrawFn with_footer(DrawFn draw, std::string text) {
  return [draw = std::move(draw), text = std::move(text)] {
    if (draw) draw();
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImDrawList* list = ImGui::GetForegroundDrawList();
    // Smaller than the panels' text (a caption, not content), but never below legibility.
    const float size = std::max(12.0f, 0.75f * ImGui::GetFontSize());
    const float pad = 0.4f * size;
    const float height = size + 2 * pad;
    const ImVec2 min(viewport->Pos.x, viewport->Pos.y + viewport->Size.y - height);
    const ImVec2 max(viewport->Pos.x + viewport->Size.x, viewport->Pos.y + viewport->Size.y);
    // Near-black with white text in both styles: reads on a slide whatever the theme around it.
    list->AddRectFilled(min, max, IM_COL32(16, 16, 16, 235));
    list->AddText(ImGui::GetFont(), size, ImVec2(min.x + 2 * pad, min.y + pad), IM_COL32(255, 255, 255, 255),
                  text.c_str());
  };
}

}  // namespace ui
