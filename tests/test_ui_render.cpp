// The dashboard's headless half: offscreen frames (size, content, a known colour at a known place, footer, style
// changes, the fallback font), PNG writing and its errors, screenshot names, frame-time statistics. A failed write's
// atomicity and a symlinked target are in test_ui_render_posix.cpp; this file runs on Windows too.
#include <doctest/doctest.h>
#include <imgui.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <set>

#include "core/error.hpp"
#include "file_test_util.hpp"
#include "gpu_test_util.hpp"
#include "platform/process.hpp"
#include "ui/offscreen.hpp"
#include "ui/screenshot.hpp"
#include "ui/style.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kMagenta = 0xFF00FFFF;  // 0xRRGGBBAA

// A renderer with validation, or null (recorded as a skip) when this machine has no Vulkan device at all. Any other
// set-up error (a missing validation layer included) is thrown and fails the test.
std::unique_ptr<ui::OffscreenRenderer> make_renderer(int width, int height, ui::StyleOptions style = {}) {
  if (!test::vulkan_device_or_skip("the offscreen renderer")) return nullptr;
  return std::make_unique<ui::OffscreenRenderer>(ui::OffscreenOptions{width, height, -1, true, style});
}

// A panel with text and a magenta rectangle at (500,300)-(620,360) in frame pixels.
void scene() {
  ImGui::SetNextWindowPos(ImVec2(20, 20));
  ImGui::SetNextWindowSize(ImVec2(420, 240));
  ImGui::Begin("Kernel timings");
  ImGui::Text("matmul_forward   1.234 ms   61.2 GFLOP/s");
  ImGui::Text("softmax_xent     0.101 ms    3.4 GB/s");
  ImGui::Button("Pause");
  ImGui::End();
  ImGui::GetBackgroundDrawList()->AddRectFilled(ImVec2(500, 300), ImVec2(620, 360), IM_COL32(255, 0, 255, 255));
}

size_t distinct_colors(const ui::Image& img, int x0, int y0, int x1, int y1) {
  std::set<uint32_t> colors;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) colors.insert(img.pixel(x, y));
  return colors.size();
}

fs::path temp_dir(const std::string& name) { return test::scratch("trainscope-test-ui", name); }

}  // namespace

TEST_CASE("offscreen: an 800x450 frame has its size, text and the known colour at the known place") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(800, 450);
  if (!renderer) return;
  ui::Image img = renderer->render(scene);
  REQUIRE(img.width == 800);
  REQUIRE(img.height == 450);
  REQUIRE(img.rgba.size() == 800u * 450u * 4u);
  CHECK(img.pixel(560, 330) == kMagenta);  // inside the rectangle
  CHECK(img.pixel(500, 300) == kMagenta);  // its top-left pixel
  CHECK(img.pixel(498, 330) != kMagenta);  // just outside
  CHECK(img.pixel(622, 330) != kMagenta);
  // The background is the dark style's clear colour (0.09, 0.09, 0.11) -> (23, 23, 28).
  CHECK(img.pixel(780, 20) == 0x17171CFF);
  // Anti-aliased text and the window's frame: many colours inside the panel, not a flat fill.
  CHECK(distinct_colors(img, 20, 20, 440, 260) > 20);
}

TEST_CASE("offscreen: write_png and stb_image round-trip the frame byte for byte") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(800, 450);
  if (!renderer) return;
  ui::Image img = renderer->render(scene);
  fs::path dir = temp_dir("png");
  fs::path file = dir / "nested" / "folder" / "frame.png";  // folders are created
  auto start = std::chrono::steady_clock::now();
  CHECK(ui::write_png(img, file.string()) == "");
  MESSAGE("write_png 800x450: ",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), " ms, ",
          fs::file_size(file), " bytes");
  int w = 0, h = 0, channels = 0;
  unsigned char* decoded = stbi_load(file.string().c_str(), &w, &h, &channels, 4);
  REQUIRE(decoded != nullptr);
  CHECK(w == 800);
  CHECK(h == 450);
  CHECK(std::equal(img.rgba.begin(), img.rgba.end(), decoded));
  stbi_image_free(decoded);
  if (const char* keep = std::getenv("TRAINSCOPE_KEEP_PNG"))
    fs::copy_file(file, keep, fs::copy_options::overwrite_existing);
  fs::remove_all(dir);
}

TEST_CASE("offscreen: the footer bar covers the bottom edge with white text on near-black") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(800, 450);
  if (!renderer) return;
  ui::Image plain = renderer->render(scene);
  ui::Image footed = renderer->render(
      ui::with_footer(scene, ui::footer_text({"GPU: llvmpipe", "MLP 784-256-10", "batch 128", "fp32", ""})));
  CHECK(plain.pixel(700, 447) == 0x17171CFF);
  const uint32_t bar = footed.pixel(795, 447);  // right end of the bar: no text there
  CHECK((bar >> 24) < 24);
  CHECK(bar != plain.pixel(795, 447));
  size_t light = 0;  // anti-aliased white text
  for (int y = 420; y < 450; ++y)
    for (int x = 0; x < 400; ++x) light += (footed.pixel(x, y) >> 24) > 200 && ((footed.pixel(x, y) >> 8) & 0xFF) > 200;
  CHECK(light > 100);
  CHECK(footed.pixel(560, 330) == kMagenta);  // the rest of the frame is unchanged
}

TEST_CASE("offscreen: a footer longer than the frame goes on two lines at the same size, not cut at the right edge") {
  const test::ValidationWatch validation;
  auto renderer = make_renderer(800, 450);
  if (!renderer) return;
  std::string text;  // about 1.1x the width at the footer's usual size
  while (text.size() < 140) text += "GPU: llvmpipe | ";
  const ui::Image plain = renderer->render(scene);
  const ui::Image one_line = renderer->render(ui::with_footer(scene, "GPU: llvmpipe | MLP"));
  const ui::Image footed = renderer->render(ui::with_footer(scene, text));
  auto light_in = [&](const ui::Image& image, int x0, int x1, int y0, int y1) {
    size_t n = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) n += (image.pixel(x, y) >> 24) > 200 && ((image.pixel(x, y) >> 8) & 0xFF) > 200;
    return n;
  };
  auto bar_top = [&](const ui::Image& image) {  // the bar's top row: where the frame differs from the plain scene
    int y = 449;
    while (y > 0 && image.pixel(795, y - 1) != plain.pixel(795, y - 1)) --y;
    return y;
  };
  // Two lines: the bar is about twice as tall, with text in its upper and lower half, none at the right edge.
  const int top = bar_top(footed), single = bar_top(one_line);
  CHECK(449 - top > 1.6 * (449 - single));
  CHECK(light_in(footed, 0, 400, top, (top + 450) / 2) > 50);
  CHECK(light_in(footed, 0, 400, (top + 450) / 2, 450) > 50);
  CHECK(light_in(footed, 792, 800, top, 450) == 0);
}

TEST_CASE("offscreen: presentation mode rebuilds the fonts larger and turns the background light") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(640, 360);
  if (!renderer) return;
  ui::Image dark = renderer->render(scene);
  CHECK(ui::fonts().size == 18);
  renderer->set_style({20, true});
  CHECK(ui::fonts().size == 30);
  CHECK(ui::fonts().from_ttf == !ui::find_font_file("DejaVuSans.ttf").empty());
  ui::Image light = renderer->render(scene);
  CHECK((light.pixel(630, 20) >> 24) > 200);  // light grey background
  CHECK((dark.pixel(630, 20) >> 24) < 40);
  CHECK(distinct_colors(light, 20, 20, 440, 260) > 20);
}

TEST_CASE("offscreen: without the DejaVu files ImGui's own font is scaled up and still draws text") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  platform::set_env("TRAINSCOPE_FONT_DIR", "/nonexistent-trainscope-fonts");
  auto renderer = make_renderer(640, 360, {26, false});
  platform::unset_env("TRAINSCOPE_FONT_DIR");
  if (!renderer) return;
  CHECK_FALSE(ui::fonts().from_ttf);
  CHECK(ImGui::GetIO().FontGlobalScale == doctest::Approx(2.0));
  ui::Image img = renderer->render(scene);
  CHECK(distinct_colors(img, 20, 20, 440, 260) > 5);
  CHECK(img.pixel(560, 330) == kMagenta);
}

TEST_CASE("offscreen: one ImGui context per process; sizes are checked") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(64, 64);
  if (!renderer) return;
  ui::OffscreenOptions options;
  options.width = options.height = 64;
  CHECK_THROWS_AS(ui::OffscreenRenderer{options}, core::Error);
  renderer.reset();
  options.width = 0;
  CHECK_THROWS_AS(ui::OffscreenRenderer{options}, core::Error);
  CHECK(make_renderer(64, 64) != nullptr);  // the context went with the first renderer
}

TEST_CASE("write_png: errors come back as messages, never as exceptions") {
  ui::Image img{4, 4, std::vector<uint8_t>(64, 200)};
  fs::path dir = temp_dir("errors");
  fs::path not_a_folder = dir / "file.txt";
  { std::ofstream(not_a_folder) << "x"; }
  std::string error;
  CHECK_NOTHROW(error = ui::write_png(img, (not_a_folder / "shots" / "a.png").string()));
  CHECK(error.find("cannot create the folder") != std::string::npos);
  if (fs::exists("/dev/full")) {  // a full disk
    CHECK_NOTHROW(error = ui::write_png(img, "/dev/full"));
    CHECK(error.find("No space left on device") != std::string::npos);
    CHECK(fs::exists("/dev/full"));
  }
  CHECK(ui::write_png(ui::Image{}, (dir / "empty.png").string()).find("empty") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "empty.png"));
  ui::SavedScreenshot saved = ui::save_screenshot(img, (not_a_folder / "b.png").string());
  CHECK_FALSE(saved.error.empty());
  fs::remove_all(dir);
}

TEST_CASE("default_screenshot_path: screenshots/trainscope-YYYYMMDD-HHMMSS.png, never an existing file") {
  // (generic form: on Windows the path has the system's backslash)
  CHECK(std::regex_match(fs::path(ui::default_screenshot_path()).generic_string(),
                         std::regex(R"(screenshots/trainscope-\d{8}-\d{6}\.png)")));
  fs::path dir = temp_dir("names");
  std::string first = ui::default_screenshot_path(dir.string());
  { std::ofstream(first) << "taken"; }
  std::string second = ui::default_screenshot_path(dir.string());
  CHECK(second != first);
  if (second.substr(0, second.size() - 6) == first.substr(0, first.size() - 4))  // same second
    CHECK(second.substr(second.size() - 6) == "-2.png");
  fs::remove_all(dir);
}

TEST_CASE("FrameTimer: mean, nearest-rank 95th percentile and max of the frame intervals") {
  ui::FrameTimer timer;
  CHECK(timer.stats().frames == 0);
  for (int i = 1; i <= 100; ++i) timer.add(i);  // 1..100 ms
  ui::FrameStats s = timer.stats();
  CHECK(s.frames == 100);
  CHECK(s.mean_ms == doctest::Approx(50.5));
  CHECK(s.p95_ms >= 95.0);  // the 95th of 100 sorted values, reported at its 0.1 ms bin's upper edge
  CHECK(s.p95_ms <= 95.1 + 1e-9);
  CHECK(s.max_ms == 100);
  CHECK(s.last_ms == 100);
  timer.add(5000);  // beyond the histogram: counted in the last bin
  CHECK(timer.stats().max_ms == 5000);
}
