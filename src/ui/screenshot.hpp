// Screenshots for slides: PNG files (stb_image_write), the default file name, and the one-line footer burnt into a
// captured frame (devices, model, batch size, precision, date), so a slide says what produced the numbers.
// Every failure comes back as a message, never as an exception, so nothing here can stop the frame loop.
#pragma once
#include <string>

#include "ui/frame.hpp"

namespace ui {

// Writes `image` as an 8-bit RGBA PNG to `path`, creating missing parent folders, with core::write_file_atomically
// (temporary file, fsync, rename: a kill or a full disk leaves the previous file as it was; a device or FIFO is
// written directly, a symlink kept). Returns "" on success or a message for the user ("cannot write the screenshot
// screenshots/x.png: No space left on device; ..."). Never throws. Cost: stb's PNG encoder on the calling thread, measured 24 ms for 800x450 and 82 ms for
// 1600x900 on a 2-core machine (move it off the UI thread if that hitch matters).
std::string write_png(const Image& image, const std::string& path) noexcept;

// "<folder>/trainscope-YYYYMMDD-HHMMSS<suffix>" in local time; "-2", "-3", ... before the suffix when that path
// already exists. suffix: ".png", "-trace.json", "-csv" (a folder), ...
std::string timestamped_path(const std::string& folder, const std::string& suffix);
// timestamped_path(folder, ".png").
std::string default_screenshot_path(const std::string& folder = "screenshots");

struct SavedScreenshot {
  std::string path;   // where it was (or would have been) written
  std::string error;  // "" on success
};
// write_png to `path`, or to default_screenshot_path() when path is empty. Never throws.
SavedScreenshot save_screenshot(const Image& image, const std::string& path = "") noexcept;

// What a screenshot's footer says; empty fields are left out.
struct FooterInfo {
  std::string devices;    // e.g. "GPU: llvmpipe [software Vulkan] | CPU: 16 threads"
  std::string model;      // e.g. "MLP 784-256-10"
  std::string batch;      // e.g. "batch 128"
  std::string precision;  // e.g. "fp32"
  std::string machine;    // what the figures were measured under, e.g. "CPU 2 threads, load 6.5"
};

// "trainscope | <devices> | <model> | <batch> | <precision> | <machine> | 2024-05-01 14:03" (local time).
std::string footer_text(const FooterInfo& info);

// `draw`, followed by a full-width bar along the bottom edge with `text`, drawn on ImGui's foreground draw list so
// it covers every panel; a text too long for one line at the bar's size goes on two (split at a " | "), and only
// what two lines cannot hold is set smaller. The window and the offscreen renderer wrap the draw function of a captured frame with it.
// While `draw` runs, in_footer_frame() is true: the dashboard leaves the footer's strip (its quick-control row) empty
// in such a frame instead of drawing buttons the footer would cut in half.
DrawFn with_footer(DrawFn draw, std::string text);

// True while with_footer's draw function runs (on this thread): the frame is a screenshot with a footer.
bool in_footer_frame();

}  // namespace ui
