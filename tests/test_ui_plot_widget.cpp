// The ImGui plot widget (ui/plot.hpp) run headlessly: a real ImGui context and font atlas, frames fed with mouse
// input by hand, and the draw data it produces checked (no window, no GPU).
#include <doctest/doctest.h>
#include <imgui.h>

#include <cmath>
#include <span>
#include <vector>

#include "imgui_test_util.hpp"
#include "ui/plot.hpp"

namespace {

// An ImGui context for one test (imgui_test_util.hpp), and frames of the plot in it.
struct HeadlessImGui : test::HeadlessImGui {
  // One frame with the plot filling a window; returns the vertices drawn (all windows, tooltips included).
  int frame(ui::Plot& plot, std::span<const ui::PlotSeries> series, std::span<const ui::PlotMarker> markers) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
    ImGui::Begin("plot test", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
    plot.draw("loss", series, markers, ImVec2(0, 0));
    ImGui::End();
    ImGui::Render();
    return ImGui::GetDrawData()->TotalVtxCount;
  }
};

struct TwoCurves {
  ui::Series gpu, cpu;
  TwoCurves() {
    for (int i = 0; i < 2000; ++i) {
      REQUIRE(gpu.push(i, 2.3 * std::exp(-i / 300.0) + 0.05));
      REQUIRE(cpu.push(i, 2.3 * std::exp(-i / 250.0) + 0.06));
    }
  }
  std::vector<ui::PlotSeries> series() const {
    return {{"GPU", IM_COL32(80, 180, 255, 255), &gpu}, {"CPU", IM_COL32(255, 160, 60, 255), &cpu}};
  }
};

const std::vector<ui::PlotMarker> kMarkers = {{1000, "batch 128 -> 256", IM_COL32(200, 200, 200, 255)}};

// The data x under screen x in the plot's current view.
double x_at(const ui::Plot& plot, float screen_x) {
  const double t = (screen_x - plot.plot_min().x) / (plot.plot_max().x - plot.plot_min().x);
  return plot.x_view().lo + t * plot.x_view().span();
}

}  // namespace

TEST_CASE("the plot draws two series and a marker; hidden series draw fewer vertices") {
  HeadlessImGui imgui;
  TwoCurves data;
  const std::vector<ui::PlotSeries> series = data.series();
  ui::Plot plot("step", "loss");
  const int both = imgui.frame(plot, series, kMarkers);
  CHECK(both > 0);
  CHECK(plot.auto_fit());
  CHECK(plot.x_view().contains(0));
  CHECK(plot.x_view().contains(1999));
  CHECK(plot.y_view().contains(0.05));
  CHECK(plot.y_view().contains(2.35));
  CHECK(plot.plot_max().x - plot.plot_min().x > 600);
  CHECK(imgui.frame(plot, series, kMarkers) == both);  // a steady state: the same drawing frame after frame

  plot.set_hidden("CPU", true);
  const int one = imgui.frame(plot, series, kMarkers);
  CHECK(one < both);
  plot.set_hidden("GPU", true);
  CHECK(imgui.frame(plot, series, kMarkers) < one);
  plot.set_hidden("CPU", false);
  plot.set_hidden("GPU", false);
  CHECK(imgui.frame(plot, series, kMarkers) == both);
  CHECK(imgui.frame(plot, series, {}) < both);  // the marker's line and label are gone

  plot.set_log_y(true);
  CHECK(imgui.frame(plot, series, kMarkers) > 0);
  CHECK(plot.y_view().lo > 0);

  plot.set_view({5, 5}, {std::nan(""), 1});  // nonsense views are repaired, not drawn as NaN
  CHECK(imgui.frame(plot, series, kMarkers) > 0);
  CHECK(plot.x_view().hi > plot.x_view().lo);
  CHECK(plot.y_view().hi > plot.y_view().lo);
  CHECK(plot.y_view().lo > 0);
}

TEST_CASE("many markers close together: labels stay in the top 40% of the plot, the newest keep theirs") {
  HeadlessImGui imgui;
  TwoCurves data;
  const std::vector<ui::PlotSeries> series = data.series();
  // A lesson toggling settings in quick succession: 40 labelled markers within 40 steps of 2000.
  std::vector<ui::PlotMarker> markers;
  for (int i = 0; i < 40; ++i)
    markers.push_back({1000.0 + i, i % 2 ? "submit per kernel off" : "submit per kernel on", IM_COL32_WHITE});
  ui::Plot plot("step", "loss");
  // Glyph vertices inside the plot (the labels: textured from the font atlas), in all and below the top 40%.
  const auto label_glyphs = [&](const std::vector<ui::PlotMarker>& ms) {
    imgui.frame(plot, series, ms);
    const ImDrawData* dd = ImGui::GetDrawData();
    const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
    const float top = plot.plot_min().y, height = plot.plot_max().y - plot.plot_min().y;
    REQUIRE(height > 100);
    std::pair<int, int> n{0, 0};
    for (int l = 0; l < dd->CmdListsCount; ++l)
      for (const ImDrawVert& v : dd->CmdLists[l]->VtxBuffer) {
        const bool in_plot = v.pos.x > plot.plot_min().x && v.pos.x < plot.plot_max().x && v.pos.y > top &&
                             v.pos.y < plot.plot_max().y;
        if (!in_plot || (v.uv.x == white.x && v.uv.y == white.y)) continue;
        ++n.first;
        if (v.pos.y > top + 0.4f * height + 1) ++n.second;
      }
    return n;
  };
  const auto [base, base_low] = label_glyphs({});  // the plot's own text inside its rectangle, if any
  const auto [glyphs, low] = label_glyphs(markers);
  CHECK(glyphs > base);    // labels are drawn
  CHECK(low == base_low);  // none below the top 40%
  std::vector<ui::PlotMarker> twice = markers;
  for (int i = 0; i < 40; ++i) twice.push_back({1040.0 + i, "unfused on", IM_COL32_WHITE});
  const auto [glyphs_twice, low_twice] = label_glyphs(twice);
  CHECK(low_twice == base_low);
  CHECK(glyphs_twice < glyphs + 40 * 10 * 4);  // not 40 more labels: the rows were full, older labels gave way
  CHECK(glyphs_twice > 0);
}

TEST_CASE("a million-point series is drawn downsampled") {
  HeadlessImGui imgui;
  ui::Series big;
  for (int i = 0; i < 1'000'000; ++i) REQUIRE(big.push(i, std::sin(i * 0.37) + 1e-6 * i));
  const std::vector<ui::PlotSeries> series = {{"noise", IM_COL32_WHITE, &big}};
  ui::Plot plot("step", "value");
  const int vertices = imgui.frame(plot, series, {});
  // Every point drawn would need at least 2 vertices each; 4 points per pixel column need far fewer.
  CHECK(vertices > 1000);
  CHECK(vertices < 200'000);
}

TEST_CASE("empty, null and non-positive data draw without trouble") {
  HeadlessImGui imgui;
  ui::Series empty, negative;
  REQUIRE(negative.push(0, -1));
  REQUIRE(negative.push(1, -2));
  const std::vector<ui::PlotSeries> series = {
      {"empty", IM_COL32_WHITE, &empty}, {"null", IM_COL32_WHITE, nullptr}, {"negative", IM_COL32_WHITE, &negative}};
  ui::Plot plot;
  CHECK(imgui.frame(plot, series, kMarkers) > 0);
  plot.set_log_y(true);
  CHECK(imgui.frame(plot, series, kMarkers) > 0);
  CHECK(plot.y_view().lo > 0);

  plot.set_view({5, 5}, {std::nan(""), 1});  // nonsense views are repaired, not drawn as NaN
  CHECK(imgui.frame(plot, series, kMarkers) > 0);
  CHECK(plot.x_view().hi > plot.x_view().lo);
  CHECK(plot.y_view().hi > plot.y_view().lo);
  CHECK(plot.y_view().lo > 0);
}

TEST_CASE("mouse: hover shows a tooltip, Ctrl+wheel zooms x about the cursor, drag pans, double-click re-fits") {
  HeadlessImGui imgui;
  TwoCurves data;
  const std::vector<ui::PlotSeries> series = data.series();
  ui::Plot plot("step", "loss");
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(-100, -100);
  const int idle = imgui.frame(plot, series, kMarkers);
  // Whole pixels: ImGui floors io.MousePos in NewFrame.
  const ImVec2 mouse(std::floor(plot.plot_min().x + 0.3f * (plot.plot_max().x - plot.plot_min().x)),
                     std::floor(0.5f * (plot.plot_min().y + plot.plot_max().y)));
  io.MousePos = mouse;
  imgui.frame(plot, series, kMarkers);                // ImGui learns what is hovered from the previous frame
  CHECK(imgui.frame(plot, series, kMarkers) > idle);  // crosshair, nearest-point circles, tooltip
  CHECK(ImGui::GetDrawData()->CmdListsCount == 2);    // the window and the tooltip

  const ui::Range before = plot.x_view();
  const double x_under_mouse = x_at(plot, mouse.x);
  io.KeyCtrl = true;
  io.MouseWheel = 1;
  imgui.frame(plot, series, kMarkers);
  io.MouseWheel = 0;
  io.KeyCtrl = false;
  CHECK_FALSE(plot.auto_fit());
  CHECK(plot.x_view().span() == doctest::Approx(0.85 * before.span()));
  CHECK(x_at(plot, mouse.x) == doctest::Approx(x_under_mouse).epsilon(1e-6));

  const ui::Range zoomed = plot.x_view();
  const double px_per_x = (plot.plot_max().x - plot.plot_min().x) / zoomed.span();
  io.MouseDown[0] = true;
  imgui.frame(plot, series, kMarkers);
  for (int i = 1; i <= 4; ++i) {
    io.MousePos = ImVec2(mouse.x + 25.0f * i, mouse.y);
    imgui.frame(plot, series, kMarkers);
  }
  io.MouseDown[0] = false;
  imgui.frame(plot, series, kMarkers);
  CHECK(plot.x_view().lo == doctest::Approx(zoomed.lo - 100 / px_per_x));  // dragged 100 px right: view moved left
  CHECK(plot.x_view().span() == doctest::Approx(zoomed.span()));

  for (int click = 0; click < 2; ++click) {  // two clicks within io.MouseDoubleClickTime
    io.MouseDown[0] = true;
    imgui.frame(plot, series, kMarkers);
    io.MouseDown[0] = false;
    imgui.frame(plot, series, kMarkers);
  }
  CHECK(plot.auto_fit());
  CHECK(plot.x_view() == before);
}

TEST_CASE("clicking a legend entry hides its series, clicking again shows it") {
  HeadlessImGui imgui;
  TwoCurves data;
  const std::vector<ui::PlotSeries> series = data.series();
  ui::Plot plot("step", "loss");
  ImGuiIO& io = ImGui::GetIO();
  const auto click = [&](ImVec2 at) {
    io.MousePos = at;
    imgui.frame(plot, series, kMarkers);
    io.MouseDown[0] = true;
    imgui.frame(plot, series, kMarkers);
    io.MouseDown[0] = false;
    imgui.frame(plot, series, kMarkers);
    io.MousePos = ImVec2(-100, -100);
    for (int i = 0; i < 30; ++i) imgui.frame(plot, series, kMarkers);  // past io.MouseDoubleClickTime
  };
  imgui.frame(plot, series, kMarkers);
  // The legend sits at the right of the canvas' top row (the y label's): walk along that row clicking until the first
  // legend entry ("GPU") hides.
  const float y = plot.canvas_min().y + 0.5f * ImGui::GetFontSize();
  float found_at = -1;
  for (float x = plot.canvas_min().x; x < plot.canvas_max().x && found_at < 0; x += 8) {
    click(ImVec2(x, y));
    if (plot.hidden("GPU")) found_at = x;
  }
  REQUIRE(found_at >= 0);
  CHECK_FALSE(plot.hidden("CPU"));
  const int with_gpu_hidden = imgui.frame(plot, series, kMarkers);
  click(ImVec2(found_at, y));
  CHECK_FALSE(plot.hidden("GPU"));
  CHECK(imgui.frame(plot, series, kMarkers) > with_gpu_hidden);
}
