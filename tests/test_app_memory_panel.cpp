// The dashboard's mixed-precision views with fabricated 16-bit runs: the memory bars' segments and their drawn widths
// against the core::MemoryUsage they come from (measured in an offscreen frame), byte formatting, the per-precision
// speed rows, the footer's precision, the memory panel remembered in the settings, and the whole dashboard rendered
// with fp16 / bf16 runs (set TRAINSCOPE_KEEP_PNG_DIR to keep the pictures).
#include <doctest/doctest.h>
#include <imgui.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "ui/dashboard.hpp"
#include "ui/offscreen.hpp"
#include "ui/panel_memory.hpp"
#include "ui/panel_precision.hpp"
#include "ui/screenshot.hpp"
#include "dashboard_test_util.hpp"

namespace {

using test::fabricated_run;
using test::keep_png;
using test::make_renderer;
using test::mlp_usage;

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;

// Every category a different size, so that a swapped field shows.
core::MemoryUsage distinct_usage() {
  core::MemoryUsage m;
  m.weights = 1 * KiB;
  m.master_weights = 2 * KiB;
  m.gradients = 3 * KiB;
  m.optimizer_state = 4 * KiB;
  m.activations = 5 * KiB;
  m.workspace = 6 * KiB;
  m.dataset = 210 * MiB;
  return m;
}


}  // namespace

TEST_CASE("memory_segments: the six categories in order, the dataset left out") {
  const core::MemoryUsage m = distinct_usage();
  const auto segments = ui::memory_segments(m);
  REQUIRE(segments.size() == 6);
  const std::map<std::string, size_t> expected = {{"weights", m.weights},         {"master weights", m.master_weights},
                                                  {"gradients", m.gradients},     {"optimizer state", m.optimizer_state},
                                                  {"activations", m.activations}, {"workspace", m.workspace}};
  size_t sum = 0;
  std::set<ImU32> colors;
  for (const auto& s : segments) {
    INFO(s.label);
    REQUIRE(expected.count(s.label) == 1);
    CHECK(s.bytes == expected.at(s.label));
    sum += s.bytes;
    colors.insert(s.color);
  }
  CHECK(sum == m.total() - m.dataset);
  CHECK(colors.size() == 6);  // one colour per category
  CHECK(std::string(segments.front().label) == "weights");
  // An empty usage still has every segment (the same colours in every bar), all zero.
  for (const auto& s : ui::memory_segments(core::MemoryUsage{})) CHECK(s.bytes == 0);
}

TEST_CASE("segment_spans: contiguous, proportional to the bytes, on the given scale") {
  const auto segments = ui::memory_segments(distinct_usage());  // 21 KiB in the bar
  const auto spans = ui::segment_spans(segments, 42 * KiB, 10.0f, 420.0f);
  REQUIRE(spans.size() == segments.size());
  CHECK(spans.front().x0 == doctest::Approx(10.0f));
  for (size_t i = 0; i < spans.size(); ++i) {
    CHECK(spans[i].x1 - spans[i].x0 == doctest::Approx(420.0 * static_cast<double>(segments[i].bytes) / (42 * KiB)));
    if (i > 0) CHECK(spans[i].x0 == spans[i - 1].x1);
  }
  CHECK(spans.back().x1 == doctest::Approx(10.0f + 210.0f));  // half the scale: half the width
  for (const auto& s : ui::segment_spans(segments, 0, 5.0f, 100.0f)) CHECK((s.x0 == 5.0f && s.x1 == 5.0f));
}

TEST_CASE("format_bytes: binary units") {
  CHECK(ui::format_bytes(0) == "0 B");
  CHECK(ui::format_bytes(1023) == "1023 B");
  CHECK(ui::format_bytes(1536) == "1.5 KiB");
  CHECK(ui::format_bytes(3 * MiB + MiB / 4) == "3.25 MiB");
  CHECK(ui::format_bytes(70000 * 785 * 4) == "209.6 MiB");
  CHECK(ui::format_bytes(size_t(3) << 30) == "3.00 GiB");
}

TEST_CASE("precision_speed_rows: per backend, sorted by precision then batch, the current one marked") {
  ui::DashboardView view;
  view.runs = {fabricated_run("gpu", core::Precision::FP16), fabricated_run("cpu", core::Precision::BF16)};
  view.runs[1].precisions.push_back({});  // a row with no measured step is left out
  const auto rows = ui::precision_speed_rows(view);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].run->name == "gpu");
  CHECK((rows[0].row->precision == core::Precision::FP32 && rows[0].row->batch == 128));
  CHECK((rows[1].row->precision == core::Precision::FP32 && rows[1].row->batch == 512));
  CHECK(rows[2].row->precision == core::Precision::FP16);
  CHECK(rows[2].row->skipped == 3);
  CHECK(rows[3].run->name == "cpu");
  CHECK(rows[5].row->precision == core::Precision::BF16);
  int current = 0;
  for (const auto& r : rows) current += r.current;
  CHECK(current == 2);  // one per backend: its precision and batch size in force
  CHECK(rows[2].current);
  CHECK(rows[5].current);
}

TEST_CASE("footer and precision_text: the precision in force; fp16 with its loss scale and skipped steps") {
  ui::DashboardView view;
  view.runs = {fabricated_run("gpu", core::Precision::FP16), fabricated_run("cpu", core::Precision::FP16)};
  CHECK(ui::precision_text(view.runs[0]) == "fp16, loss scale 8192, 3 steps skipped");
  std::string footer = ui::Dashboard::footer(view);
  CHECK(footer.find("| batch 512 | fp16 |") != std::string::npos);
  CHECK(footer.find("fp32") == std::string::npos);
  // The devices without their details, so that the batch, the precision and the date fit a 1280-pixel slide after
  // a run through fp16 (they were cut there): the footer's two lines (ui::with_footer splits it at the " | " nearest
  // its middle) each at the footer's smallest type (12 px, ~7 px a character).
  CHECK(footer.find("(LLVM") == std::string::npos);
  CHECK(footer.find("llvmpipe [software Vulkan") != std::string::npos);
  CHECK(footer.size() < 2 * (1280 / 7) - 20);
  // What the figures were measured under: the CPU's threads and the machine's load (issue 32).
  CHECK(footer.find("| CPU ") != std::string::npos);
  CHECK(footer.find(" threads") != std::string::npos);
  // The load given with the view (a system without a load average, Windows, leaves it out of the footer).
  view.load = 3.5;
  CHECK(ui::Dashboard::footer(view).find(", load 3.5") != std::string::npos);
  view.runs[1] = fabricated_run("cpu", core::Precision::BF16);
  footer = ui::Dashboard::footer(view);
  CHECK(footer.find("| GPU fp16, CPU bf16 |") != std::string::npos);
}

TEST_CASE("the view beside the plots (the Memory tab, say) is remembered in the settings") {
  ui::Dashboard d;
  CHECK(d.tab() == ui::Tab::Controls);
  ui::Settings s;
  d.save(s);
  CHECK(s.tab == "controls");
  s.tab = "memory";
  ui::Dashboard e;
  e.load(s);
  CHECK(e.tab() == ui::Tab::Memory);
  ui::Settings t;
  e.save(t);
  CHECK(t.tab == "memory");
  s.tab = "no such tab";  // an unknown name (an edited file): the default
  ui::Dashboard f;
  f.load(s);
  CHECK(f.tab() == ui::Tab::Controls);
  for (ui::Tab tab : ui::kTabs) CHECK(ui::parse_tab(ui::tab_name(tab)) == tab);
}

// Draws the memory panel alone and measures, on one pixel row through each bar, how many pixels each category's
// colour covers: the drawn widths must be in the proportions of the MemoryUsage, and the two bars on one scale.
TEST_CASE("offscreen: the memory bars' drawn widths match the MemoryUsage they come from") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  auto renderer = make_renderer(1000, 420);
  if (!renderer) return;
  ui::DashboardView view;
  view.runs = {fabricated_run("gpu", core::Precision::FP16)};
  const core::BackendRun& run = view.runs[0];
  ui::MemoryPanel panel;
  const ui::Image img = renderer->render([&] {
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(1000, 420));
    ImGui::Begin("memory", nullptr, ImGuiWindowFlags_NoDecoration);
    panel.draw(view);
    ImGui::End();
  });
  keep_png(img, "memory_panel.png");
  const auto segments = ui::memory_segments(run.memory);
  auto rgba = [](ImU32 c) {  // ImU32 is 0xAABBGGRR; Image::pixel gives 0xRRGGBBAA
    return (c & 0xFF) << 24 | ((c >> 8) & 0xFF) << 16 | ((c >> 16) & 0xFF) << 8 | 0xFF;
  };
  // Per row: pixels of each category's colour. A bar's rows have many; the legend's boxes are small.
  std::vector<std::vector<int>> bar_rows;  // counts per category, for each row that belongs to a bar
  std::vector<int> bar_y;
  for (int y = 0; y < img.height; ++y) {
    std::vector<int> counts(segments.size(), 0);
    for (int x = 0; x < img.width; ++x)
      for (size_t i = 0; i < segments.size(); ++i) counts[i] += img.pixel(x, y) == rgba(segments[i].color);
    int sum = 0;
    for (int c : counts) sum += c;
    if (sum > 200) {
      bar_rows.push_back(counts);
      bar_y.push_back(y);
    }
  }
  // Two bars (now, fp32), each several rows high: take the middle row of each run of consecutive rows.
  std::vector<std::vector<int>> bars;
  for (size_t i = 0; i < bar_y.size();) {
    size_t j = i;
    while (j + 1 < bar_y.size() && bar_y[j + 1] == bar_y[j] + 1) ++j;
    bars.push_back(bar_rows[(i + j) / 2]);
    i = j + 1;
  }
  REQUIRE(bars.size() == 2);
  auto check_bar = [&](const std::vector<int>& counts, const core::MemoryUsage& m, double px_per_byte) {
    const auto expected = ui::memory_segments(m);
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO(std::string(expected[i].label), ": ", counts[i], " px drawn for ", expected[i].bytes, " bytes");
      CHECK(std::abs(counts[i] - px_per_byte * static_cast<double>(expected[i].bytes)) <= 1.5);
    }
  };
  // The longer bar (fp32) sets the scale: its pixels per byte apply to both.
  int fp32_px = 0;
  for (int c : bars[1]) fp32_px += c;
  const double px_per_byte = fp32_px / static_cast<double>(run.memory_fp32.total() - run.memory_fp32.dataset);
  CHECK(fp32_px > 500);  // most of the 1000-pixel width
  check_bar(bars[0], run.memory, px_per_byte);
  check_bar(bars[1], run.memory_fp32, px_per_byte);
  CHECK(bars[1][1] == 0);  // no master weights in fp32
}

TEST_CASE("offscreen: the whole dashboard with fp16 and bf16 runs, at 1600x900 and 1024x640") {
  const test::ValidationWatch validation;  // the renderer enables the layer: no message may come
  for (auto [w, h] : {std::pair{1600, 900}, std::pair{1024, 640}}) {
    auto renderer = make_renderer(w, h);
    if (!renderer) return;
    ui::DashboardView view;
    view.runs = {fabricated_run("gpu", core::Precision::FP16), fabricated_run("cpu", core::Precision::BF16)};
    view.runs[1].precision_unsupported[static_cast<size_t>(core::Precision::FP16)] = "";
    view.runs[0].precision_unsupported[static_cast<size_t>(core::Precision::BF16)] =
        "no 16-bit storage buffers on this device";
    ui::DashboardModel model;
    model.update(view.runs);
    view.model = &model;
    view.config = view.runs[0].config;
    ui::Dashboard dashboard;
    const ui::Image img = renderer->render(
        ui::with_footer([&] { dashboard.draw(view, nullptr); }, ui::Dashboard::footer(view)), 3);
    CHECK(img.width == w);
    // The footer takes the quick controls' row in a screenshot (they were cut in half by it); a plain frame has them.
    CHECK(dashboard.drawn().layout.quick_bar);
    CHECK(dashboard.drawn().bar_max.y == 0);
    CHECK_FALSE(ui::in_footer_frame());
    (void)renderer->render([&] { dashboard.draw(view, nullptr); }, 1);
    CHECK(dashboard.drawn().bar_max.y > 0.9f * h);
    keep_png(img, "dashboard_" + std::to_string(w) + ".png");
  }
}
