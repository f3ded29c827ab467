// Shared by the dashboard's offscreen tests: fabricated runs (the figures of an MLP 784-256-128-10 on Fashion-MNIST in
// a given precision, with steps, markers and per-precision rows) and an offscreen renderer with validation.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "core/metrics.hpp"
#include "core/model_view.hpp"
#include "core/step_plan.hpp"
#include "gpu_test_util.hpp"
#include "ui/offscreen.hpp"
#include "ui/screenshot.hpp"

namespace test {

// What an MLP 784-256-128-10 with AdamW holds at batch `batch` in `p` (close to the trainers' real figures; the
// layout is core::TensorLayout's), dataset 70000 Fashion-MNIST images as fp32 on the GPU.
inline core::MemoryUsage mlp_usage(core::Precision p, size_t batch, bool gpu) {
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

inline core::BackendRun fabricated_run(const std::string& name, core::Precision p) {
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
  // Kernel timings of 20 steps of the plan in force (a made-up time per entry, GPU slower).
  const core::StepPlan plan = core::build_step_plan(core::ModelShape({784, 256, 128, 10}), run.config.batch,
                                                    core::Activation::ReLU, core::Optimizer::AdamW, p);
  for (long step = 0; step < 20; ++step) {
    core::StepRecord r;
    r.step = step;
    for (size_t e = 0; e < plan.entries.size(); ++e) {
      r.kernel_ms.push_back(0.05 * static_cast<double>(1 + e % 4) * scale);
      r.step_ms += r.kernel_ms.back();
    }
    run.kernels.add(plan, r);
  }
  if (p == core::Precision::FP16) {
    run.loss_scale = 8192;
    run.skipped_steps = 3;
    run.markers.push_back({250, run.step_seconds[250], "fp16 overflow: 3 steps skipped, scale 65536 -> 8192"});
  }
  // What the model sees: 16 made-up 28x28 images (a gradient with a bright square), classes 0..9 then 0..5, every
  // third predicted wrong, and a CNN's 32 first filters: the Model tab at its fullest.
  auto view = std::make_shared<core::ModelView>();
  view->height = view->width = 28, view->channels = 1;
  core::Dataset names;
  names.name = "fashion-mnist", names.classes = 10;
  view->class_names = core::class_names(names);
  for (int i = 0; i < 16; ++i) {
    view->rows.push_back(i);
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x)
        view->images.push_back(std::abs(x - 14) + std::abs(y - 14) < 4 + i / 2 ? 1.0f : static_cast<float>(x) / 40);
    view->labels.push_back(i % 10);
    view->predicted.push_back(i % 3 == 0 ? (i + 1) % 10 : i % 10);
  }
  view->step = steps;
  view->filters = 32, view->filter_channels = 1;
  for (int k = 0; k < 32 * 9; ++k) view->filter_weights.push_back(static_cast<float>((k * 7) % 11 - 5) / 5);
  run.model_view = view;
  return run;
}

// A renderer with validation, or null (recorded as a skip) when this machine has no Vulkan device at all; any other
// set-up error fails the test.
inline std::unique_ptr<ui::OffscreenRenderer> make_renderer(int width, int height) {
  if (!vulkan_device_or_skip("the offscreen renderer")) return nullptr;
  return std::make_unique<ui::OffscreenRenderer>(ui::OffscreenOptions{width, height, -1, true, {}});
}

inline void keep_png(const ui::Image& img, const std::string& name) {
  if (const char* dir = std::getenv("TRAINSCOPE_KEEP_PNG_DIR"))
    CHECK(ui::write_png(img, (std::filesystem::path(dir) / name).string()) == "");
}

}  // namespace test
