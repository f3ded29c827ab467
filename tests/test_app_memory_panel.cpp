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
#include "gpu_test_util.hpp"

namespace {

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

// What an MLP 784-256-128-10 with AdamW holds at batch `batch` in `p` (close to the trainers' real figures; the
// layout is core::fp32_reference_memory's), dataset 70000 Fashion-MNIST images as fp32 on the GPU.
core::MemoryUsage mlp_usage(core::Precision p, size_t batch, bool gpu) {
  const size_t params = 235'520;  // 784*256 + 256 + 256*128 + 128 + 128*10 + 10, each tensor aligned to 128
  const size_t s = core::storage_bytes(p);
  core::MemoryUsage m;
  m.weights = params * s;
  m.master_weights = p == core::Precision::FP32 ? 0 : params * 4;
  m.gradients = params * s;
  m.optimizer_state = 2 * params * 4;
  m.activations = batch * (784 + 3) * s + batch * (256 * 3 + 128 * 3 + 10 * 2) * s;
  m.workspace = (60000 + 3 * 10000 + 10) * 4;
  m.dataset = gpu ? 70000 * 785 * 4 : 0;
  return m;
}

core::BackendRun fabricated_run(const std::string& name, core::Precision p) {
  core::BackendRun run;
  run.name = name;
  run.device = name == "gpu" ? "llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on the CPU]"
                             : "AMD EPYC (2 threads, AVX2)";
  run.config.precision = p;
  run.config.batch = 512;
  run.memory = mlp_usage(p, 512, name == "gpu");
  run.memory_fp32 = mlp_usage(core::Precision::FP32, 512, name == "gpu");
  const int steps = name == "gpu" ? 300 : 900;
  for (int i = 0; i < steps; ++i) {
    run.step_losses.push_back(2.3f / (1.0f + 0.01f * static_cast<float>(i)) + 0.05f * static_cast<float>(i % 7) / 7);
    run.step_seconds.push_back(0.05f * static_cast<float>(i) * (name == "gpu" ? 3.0f : 1.0f));
  }
  run.epoch = 1;
  run.step_in_epoch = steps;
  run.steps_per_epoch = 117;
  run.elapsed_s = run.step_seconds.back();
  run.recent_samples_per_s = name == "gpu" ? 3400 : 10200;
  run.peak_gbps = name == "gpu" ? 21.5 : 15.9;
  auto row = [](core::Precision prec, int batch, long n, double ms, long skipped) {
    core::PrecisionRow r;
    r.precision = prec;
    r.batch = batch;
    r.steps = n;
    r.step_ms = ms * static_cast<double>(n);
    r.bytes = 3.0e6 * static_cast<double>(core::storage_bytes(prec)) * static_cast<double>(n);
    r.flops = 6.0 * 235'520 * batch * static_cast<double>(n);
    r.skipped = skipped;
    return r;
  };
  const double scale = name == "gpu" ? 3.0 : 1.0;
  run.precisions = {row(p, 512, 150, 40 * scale, p == core::Precision::FP16 ? 3 : 0),
                    row(core::Precision::FP32, 512, 140, 48 * scale, 0),
                    row(core::Precision::FP32, 128, 100, 14 * scale, 0)};
  run.markers = {{100, run.step_seconds[100], "batch 128 -> 512"},
                 {240, run.step_seconds[240], std::string("fp32 -> ") + core::to_string(p)}};
  if (p == core::Precision::FP16) {
    run.loss_scale = 8192;
    run.skipped_steps = 3;
    run.markers.push_back({250, run.step_seconds[250], "fp16 overflow: 3 steps skipped, scale 65536 -> 8192"});
  }
  return run;
}

// A renderer with validation, or null (recorded as a skip) when this machine has no Vulkan device at all; any other
// set-up error fails the test.
std::unique_ptr<ui::OffscreenRenderer> make_renderer(int width, int height) {
  if (!test::vulkan_device_or_skip("the offscreen renderer")) return nullptr;
  return std::make_unique<ui::OffscreenRenderer>(ui::OffscreenOptions{width, height, -1, true, {}});
}

void keep_png(const ui::Image& img, const std::string& name) {
  if (const char* dir = std::getenv("TRAINSCOPE_KEEP_PNG_DIR"))
    CHECK(ui::write_png(img, (std::filesystem::path(dir) / name).string()) == "");
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
  CHECK(footer.find("| fp16 (fp16 steps skipped: GPU 3, CPU 3) |") != std::string::npos);
  CHECK(footer.find("fp32") == std::string::npos);
  view.runs[1] = fabricated_run("cpu", core::Precision::BF16);
  footer = ui::Dashboard::footer(view);
  CHECK(footer.find("| GPU fp16, CPU bf16 (fp16 steps skipped: GPU 3, CPU 0) |") != std::string::npos);
  view.runs[0].skipped_steps = 0;
  footer = ui::Dashboard::footer(view);
  CHECK(footer.find("| GPU fp16, CPU bf16 |") != std::string::npos);
}

TEST_CASE("the memory panel is shown by default and remembered in the settings") {
  ui::Dashboard d;
  CHECK(d.show_memory);
  d.show_memory = false;
  ui::Settings s;
  d.save(s);
  REQUIRE(s.panels.count("memory") == 1);
  CHECK_FALSE(s.panels.at("memory"));
  ui::Dashboard e;
  e.load(s);
  CHECK_FALSE(e.show_memory);
  CHECK(e.show_kernels);
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
    keep_png(img, "dashboard_" + std::to_string(w) + ".png");
  }
}
