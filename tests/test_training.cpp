// End-to-end training on real data: the GPU and CPU trainers from the same initial weights on the same batches.
// Needs Debian's dataset-fashion-mnist (falls back to the spiral, with a visible message, when it is absent).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "cpu/trainer.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

namespace {

core::DataSplit load_subset(int train_samples) {
  if (std::filesystem::exists(core::kDefaultFashionMnistDir)) {
    core::DataSplit d = core::load_mnist_dir(core::kDefaultFashionMnistDir, true);
    d.train = core::take_first(d.train, train_samples);
    return d;
  }
  MESSAGE("Fashion-MNIST is not installed: using the spiral dataset instead");
  return core::make_spiral(3, train_samples / 3, 300, 0.1f, 1);
}

// The GPU trainer, or null (recorded as a skip) when this machine has no Vulkan device at all. Any other error of its
// set-up (a missing validation layer, a wiring mistake) is thrown and fails the test.
std::unique_ptr<core::Trainer> make_gpu(const core::TrainConfig& cfg, const core::DataSplit& d,
                                        const std::vector<float>& p) {
  if (!test::vulkan_device_or_skip("the GPU trainer")) return nullptr;
  return gpu::make_trainer(cfg, d, p);
}

// Both trainers from the same initial weights on the same first `steps` batches of epoch 0: their records, and the
// GPU's plan size. Empty records when there is no Vulkan device (the caller skips).
struct SideBySide {
  std::vector<core::StepRecord> gpu, cpu;
  size_t gpu_plan_entries = 0;
};

SideBySide train_side_by_side(const core::TrainConfig& cfg, const core::DataSplit& data, int steps) {
  SideBySide out;
  auto params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  auto gpu = make_gpu(cfg, data, params);
  if (!gpu) return out;
  auto cpu = cpu::make_trainer(cfg, data, params);
  auto order = core::epoch_order(data.train.count, cfg.seed, 0);
  gpu->begin_epoch(order);
  cpu->begin_epoch(order);
  for (int s = 0; s < steps; ++s) {
    gpu->step(static_cast<size_t>(s) * cfg.batch);
    cpu->step(static_cast<size_t>(s) * cfg.batch);
  }
  out.gpu = gpu->flush();
  out.cpu = cpu->flush();
  out.gpu_plan_entries = gpu->plan().entries.size();
  return out;
}

}  // namespace

TEST_CASE("fp32, same seed: the first 20 training losses of GPU and CPU agree within 1e-4 relative") {
  auto data = load_subset(128 * 20);
  core::TrainConfig cfg;
  cfg.hidden = {256, 128};
  cfg.batch = 128;
  cfg.validation = true;
  const test::ValidationWatch validation;  // every context of this test: no validation message
  for (auto opt : {core::Optimizer::AdamW, core::Optimizer::SGD}) {
    for (auto act : core::kActivations) {
      if (opt == core::Optimizer::SGD && act == core::Activation::SiLU) continue;  // SiLU once, with AdamW: test time
      CAPTURE(std::string(core::to_string(opt)));
      CAPTURE(std::string(core::to_string(act)));
      cfg.optimizer = opt;
      cfg.activation = act;
      cfg.lr = opt == core::Optimizer::AdamW ? 1e-3f : 0.05f;
      const SideBySide run = train_side_by_side(cfg, data, 20);
      if (run.gpu_plan_entries == 0) return;
      const auto& g = run.gpu;
      const auto& c = run.cpu;
      REQUIRE(g.size() == 20);
      REQUIRE(c.size() == 20);
      for (int s = 0; s < 20; ++s) {
        CAPTURE(s);
        CHECK(std::fabs(g[s].loss - c[s].loss) <= 1e-4 * std::fabs(c[s].loss));
        CHECK(g[s].kernel_ms.size() == run.gpu_plan_entries);
      }
      CHECK(c.back().loss < c.front().loss);  // it learns
    }
  }
}

TEST_CASE("the CNN, fp32, same seed: the first 20 training losses of GPU and CPU agree within 1e-4 relative") {
  // A small CNN (conv 3 and 5, dense 16) at batch 16 on Fashion-MNIST's 28x28 images: every convolution and pooling
  // kernel at the real image size, cheaply (the full --conv 32,64 model: docs/benchmarks.md).
  auto data = load_subset(16 * 20);
  if (data.train.height == 0) {
    MESSAGE("SKIPPED the CNN's 20 steps: Fashion-MNIST is not installed (a CNN needs images)");
    return;
  }
  core::TrainConfig cfg;
  cfg.model = core::ModelKind::CNN;
  cfg.conv = {3, 5};
  cfg.hidden = {16};
  cfg.batch = 16;
  cfg.lr = 3e-3f;
  cfg.validation = true;
  const test::ValidationWatch validation;
  const SideBySide run = train_side_by_side(cfg, data, 20);
  if (run.gpu_plan_entries == 0) return;
  REQUIRE(run.gpu.size() == 20);
  REQUIRE(run.cpu.size() == 20);
  double worst = 0;
  for (int s = 0; s < 20; ++s) {
    CAPTURE(s);
    const double rel = std::fabs(run.gpu[s].loss - run.cpu[s].loss) / std::fabs(run.cpu[s].loss);
    worst = std::max(worst, rel);
    CHECK(rel <= 1e-4);
  }
  MESSAGE("CNN: largest relative difference of the 20 losses " << worst);
  CHECK(run.cpu.back().loss < run.cpu.front().loss);  // it learns
}

TEST_CASE("fp16 and bf16, same seed: GPU and CPU store the same 16-bit tensors, so their losses and scales agree") {
  auto data = load_subset(128 * 20);
  core::TrainConfig cfg;
  cfg.hidden = {256, 128};
  cfg.batch = 128;
  cfg.validation = true;
  const test::ValidationWatch validation;  // every context of this test: no validation message
  for (auto precision : {core::Precision::FP16, core::Precision::BF16}) {
    CAPTURE(std::string(core::to_string(precision)));
    cfg.precision = precision;
    const SideBySide run = train_side_by_side(cfg, data, 20);
    if (run.gpu_plan_entries == 0) return;
    const auto& g = run.gpu;
    const auto& c = run.cpu;
    REQUIRE(g.size() == 20);
    REQUIRE(c.size() == 20);
    // Both round every stored tensor to nearest even from fp32 sums; the sums' order differs (GPU tiles, CPU
    // register blocks), so a value near a rounding boundary can land one 16-bit ulp apart: a loose relative bound.
    const double rtol = precision == core::Precision::FP16 ? 2e-3 : 2e-2;
    for (int s = 0; s < 20; ++s) {
      CAPTURE(s);
      CHECK(g[s].loss == doctest::Approx(c[s].loss).epsilon(rtol));
      CHECK(g[s].loss_scale == c[s].loss_scale);
      CHECK(g[s].skipped == c[s].skipped);
      CHECK(g[s].kernel_ms.size() == run.gpu_plan_entries);
    }
    CHECK(c.back().loss < c.front().loss);
  }
}

TEST_CASE("a short run on a subset reaches > 0.75 test accuracy on both backends, within 0.01 of each other") {
  auto data = load_subset(12000);
  core::TrainConfig cfg;
  cfg.hidden = {128};
  cfg.batch = 64;
  cfg.validation = true;
  const test::ValidationWatch validation;  // every context of this test: no validation message
  auto params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  auto cpu = cpu::make_trainer(cfg, data, params);
  auto gpu = make_gpu(cfg, data, params);
  std::vector<core::Trainer*> trainers{cpu.get()};
  if (gpu) trainers.push_back(gpu.get());
  std::vector<double> accuracy;
  for (auto* t : trainers) {
    for (int epoch = 0; epoch < 2; ++epoch) {
      auto order = core::epoch_order(data.train.count, cfg.seed, epoch);
      t->begin_epoch(order);
      for (int s = 0; s < core::steps_per_epoch(data.train.count, cfg.batch); ++s) {
        t->step(static_cast<size_t>(s) * cfg.batch);
        if ((s + 1) % cfg.readback_interval == 0) t->flush();
      }
      t->flush();
    }
    auto r = t->evaluate();
    MESSAGE(std::string(t->backend()), ": test accuracy ", r.accuracy, ", test loss ", r.loss);
    CHECK(r.accuracy > 0.75);
    CHECK(std::isfinite(r.loss));
    accuracy.push_back(r.accuracy);
  }
  if (accuracy.size() == 2) CHECK(std::fabs(accuracy[0] - accuracy[1]) < 0.01);
}

TEST_CASE("GPU readback: records come back in step order with plausible timings, also past the ring size") {
  auto data = core::make_spiral(3, 200, 50, 0.1f, 3);
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.hidden = {16};
  cfg.batch = 16;
  cfg.readback_interval = 4;
  cfg.validation = true;
  const test::ValidationWatch validation;  // every context of this test: no validation message
  auto params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  auto gpu = make_gpu(cfg, data, params);
  if (!gpu) return;
  gpu->begin_epoch(core::epoch_order(data.train.count, cfg.seed, 0));
  for (int s = 0; s < 10; ++s) gpu->step(static_cast<size_t>(s) * cfg.batch);  // 10 steps > ring of 4
  auto records = gpu->flush();
  REQUIRE(records.size() == 10);
  for (int s = 0; s < 10; ++s) {
    CHECK(records[s].step == s);
    CHECK(std::isfinite(records[s].loss));
    CHECK(records[s].kernel_ms.size() == gpu->plan().entries.size());
    for (double ms : records[s].kernel_ms) CHECK(ms >= 0);
    CHECK(records[s].step_ms > 0);
  }
  CHECK(gpu->flush().empty());
  auto p = gpu->parameters();
  CHECK(p.size() == params.size());
  CHECK(p != params);  // the update ran
}
