// A window that fits (issue 32, part 4): the first size shrunk to the screen's work area (ui::fit_window), and in the
// dashboard drawn offscreen at 1024x768, 1280x720, 1366x768 and 1920x1080, normal and in presentation mode, the two
// texts a teacher cannot lose: the GPU's honesty label ("[software Vulkan]") and the lesson's hint, both whole, with
// the lesson's longest caption whole beside the hint; wrapped text never breaks a figure. TRAINSCOPE_KEEP_PNG_DIR
// keeps the pictures.
#include <doctest/doctest.h>
#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dashboard_test_util.hpp"
#include "imgui_test_util.hpp"
#include "ui/dashboard.hpp"
#include "ui/lesson.hpp"
#include "ui/text_fit.hpp"
#include "ui/window.hpp"

TEST_CASE("fit_window: a size larger than the work area shrinks to it, frame included; a smaller one stays") {
  const int screen[4] = {0, 0, 1280, 720};
  const int no_frame[4] = {0, 0, 0, 0};
  ui::WindowFit fit = ui::fit_window(1600, 900, screen, no_frame);
  CHECK(fit.shrunk);
  CHECK(fit.width == 1280);
  CHECK(fit.height == 720);
  fit = ui::fit_window(1024, 600, screen, no_frame);
  CHECK_FALSE(fit.shrunk);
  CHECK(fit.width == 1024);
  CHECK(fit.height == 600);
  // A taskbar of 40 at the top, a frame of 4 around and a title bar of 30: the whole frame inside the work area.
  const int work[4] = {0, 40, 1280, 680};
  const int frame[4] = {4, 30, 4, 4};
  fit = ui::fit_window(1280, 720, work, frame);
  CHECK(fit.shrunk);
  CHECK(fit.width == 1272);
  CHECK(fit.height == 646);
  CHECK(fit.x == 4);
  CHECK(fit.y == 70);
  const int unknown[4] = {0, 0, 0, 0};  // no work area reported: the size as asked
  fit = ui::fit_window(1600, 900, unknown, no_frame);
  CHECK_FALSE(fit.shrunk);
  CHECK(fit.width == 1600);
}

namespace {

std::string longest_shipped_caption() {
  const char* source = std::getenv("TRAINSCOPE_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "set TRAINSCOPE_SOURCE_DIR (ctest does)");
  std::string longest;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(source) / "assets" / "lessons"))
    if (entry.path().extension() == ".json")
      for (const auto& step : ui::load_lesson(entry.path().string()).steps)
        if (step.caption && step.caption->size() > longest.size()) longest = *step.caption;
  return longest;
}

}  // namespace

TEST_CASE("1024x768 to 1920x1080, both modes: the device label and the lesson's hint whole, the caption whole") {
  struct Size {
    int width, height;
  };
  const std::string caption = longest_shipped_caption();
  REQUIRE(caption.size() > 40);
  const test::ValidationWatch validation;
  for (const Size size : {Size{1024, 768}, Size{1280, 720}, Size{1366, 768}, Size{1920, 1080}}) {
    auto renderer = test::make_renderer(size.width, size.height);
    if (!renderer) return;
    // 18 px normal and presented, and the large type of a first start on a screen up to 1366 wide (24 px; never
    // with presentation mode, which has large type of its own).
    struct Style {
      float font;
      bool presentation;
    };
    for (const auto [font, presentation] : {Style{18, false}, Style{18, true}, Style{24, false}}) {
      renderer->set_style(ui::StyleOptions{font, presentation});
      // The hint's widest usual form, and a longer one.
      for (const std::string hint : {"10/12 · earlier · Space: on", "10/12 · training… · next noted"}) {
        CAPTURE(size.width);
        CAPTURE(font);
        CAPTURE(presentation);
        CAPTURE(hint);
        ui::DashboardModel model;
        ui::DashboardView view;
        view.runs = {test::fabricated_run("gpu", core::Precision::FP32),
                     test::fabricated_run("cpu", core::Precision::FP32)};
        model.update(view.runs);
        view.model = &model;
        view.config = view.runs[0].config;
        view.caption = view.caption_reserve = caption;
        view.caption_hint = hint;
        ui::Dashboard dashboard;
        dashboard.show(ui::Tab::Kernels);
        const ui::Image image = renderer->render([&] { dashboard.draw(view, nullptr); }, 3);
        test::keep_png(image, "fit_" + std::to_string(size.width) + (presentation ? "_p" : "_n") +
                                  (hint.find("next noted") != std::string::npos ? "_long" : "") + ".png");
        const ui::DrawnLayout& d = dashboard.drawn();
        CHECK(d.caption_hint == hint);
        REQUIRE(d.devices.size() == 2);
        const std::string& gpu = d.devices[0];
        CAPTURE(gpu);
        const std::string label = "[software Vulkan";
        CHECK(gpu.find(label) != std::string::npos);
        CHECK(gpu.back() == ']');
        CHECK(gpu.find("\xE2\x80\xA6", gpu.find(label)) == std::string::npos);  // no "…" inside the label
        // The caption beside the hint: every line within its room, no line cut with "…".
        CHECK(d.caption_widest <= d.caption_text_width);
        for (const auto& line : d.caption_text) CHECK(line.find("\xE2\x80\xA6") == std::string::npos);
        // The quick bar (Pause, batch, precision, Screenshot) in view, inside the window, under the plots.
        CHECK(d.layout.quick_bar);
        CHECK(d.bar_max.y <= static_cast<float>(size.height));
        CHECK(d.bar_min.y >= d.plots_max.y);
      }
    }
  }
}

TEST_CASE("wrap_words: every word whole on one line at every width, figures such as 67.1k and 0.085x included") {
  // ImGui's own wrapping breaks after a '.', and a lesson's summary slide showed "67." and "1k" on two lines.
  const test::HeadlessImGui imgui;
  ImGui::NewFrame();
  const std::string text = "One loader thread keeps up with this GPU: 67.1k samples/s against 36.4k, 0.085x of it.";
  std::vector<std::string> words;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find(' ', at), text.size());
    words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  const float size = ImGui::GetFontSize();
  float widest = 0;
  for (const auto& word : words) widest = std::max(widest, ImGui::CalcTextSize(word.c_str()).x);
  for (float width = widest; width <= 40 * size; width += 7) {
    CAPTURE(width);
    const std::vector<std::string> lines = ui::wrap_words(text, size, width, 1000);
    std::vector<std::string> again;  // the lines' words in order: the text's words, none cut
    for (const auto& line : lines) {
      // (the font's unrounded width: CalcTextSize rounds up to a whole pixel)
      CHECK(ImGui::GetFont()->CalcTextSizeA(size, 1e9f, 0, line.c_str()).x <= width);
      for (size_t at = 0; at < line.size();) {
        const size_t end = std::min(line.find(' ', at), line.size());
        again.push_back(line.substr(at, end - at));
        at = end + 1;
      }
    }
    CHECK(again == words);
  }
  ImGui::EndFrame();
}
