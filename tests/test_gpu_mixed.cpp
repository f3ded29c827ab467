// Mixed precision in the GPU trainer: a diverging fp16 run never puts inf or NaN into the fp32 master weights, and a
// precision switch (export_state -> import_state into a trainer of another precision) loses nothing. (Its steps
// against the whole-step reference, skipped fp16 steps included, are tests/test_train_step.cpp.) On a 3,840-sample subset of Fashion-MNIST (the spiral, with a visible
// message, where it is not installed) with a small model, so that it runs in seconds on lavapipe.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <memory>
#include <vector>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

namespace {

struct Setup {
  core::TrainConfig cfg;
  core::DataSplit data;
  std::vector<float> init;
};

const core::DataSplit& data() {
  static const core::DataSplit d = [] {
    if (std::filesystem::exists(core::kDefaultFashionMnistDir)) {
      core::DataSplit f = core::load_mnist_dir(core::kDefaultFashionMnistDir, true);
      f.train = core::take_first(f.train, 64 * 60);
      f.test = core::take_first(f.test, 2000);
      return f;
    }
    MESSAGE("Fashion-MNIST is not installed: using the spiral dataset instead");
    return core::make_spiral(3, 64 * 20, 500, 0.02f, 7);
  }();
  return d;
}

Setup setup(core::Precision precision, core::Optimizer opt = core::Optimizer::AdamW) {
  Setup s;
  s.cfg.hidden = {64};
  s.cfg.batch = 64;  // 60 steps per epoch
  s.cfg.optimizer = opt;
  s.cfg.lr = opt == core::Optimizer::AdamW ? 2e-3f : 0.05f;
  s.cfg.readback_interval = 4;
  s.cfg.validation = true;
  s.cfg.precision = precision;
  s.data = data();
  s.init = core::init_parameters(core::model_shape(s.cfg, s.data), s.cfg.seed);
  return s;
}

std::string name(core::Precision p) { return core::to_string(p); }

// The GPU trainer (with the validation layer), or null (recorded as a skip) when this machine has no Vulkan device at
// all; any other set-up error fails the test.
std::unique_ptr<core::Trainer> make_gpu(const Setup& s) {
  if (!test::vulkan_device_or_skip("the GPU trainer")) return nullptr;
  return gpu::make_trainer(s.cfg, s.data, s.init);
}

// Trains `steps` steps from the start of epoch `epoch`'s order (wrapping into the next epochs) and returns the records.
std::vector<core::StepRecord> train(core::Trainer& t, const Setup& s, int steps, int epoch = 0) {
  const int per_epoch = core::steps_per_epoch(s.data.train.count, s.cfg.batch);
  std::vector<core::StepRecord> out;
  for (int i = 0; i < steps; ++i) {
    if (i % per_epoch == 0) t.begin_epoch(core::epoch_order(s.data.train.count, s.cfg.seed, epoch + i / per_epoch));
    t.step(static_cast<size_t>(i % per_epoch) * static_cast<size_t>(s.cfg.batch));
    for (auto& r : t.flush()) out.push_back(r);
  }
  for (auto& r : t.flush()) out.push_back(r);
  return out;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("GPU fp16 with a divergent learning rate: whatever overflows, the fp32 master weights stay finite") {
  const test::ValidationWatch validation;  // every trainer here enables the layer
  for (core::Optimizer opt : {core::Optimizer::SGD, core::Optimizer::AdamW}) {
    CAPTURE(std::string(core::to_string(opt)));
    Setup s = setup(core::Precision::FP16, opt);
    s.cfg.lr = 10.0f;  // the largest the config allows
    auto t = make_gpu(s);
    if (!t) return;
    const auto records = train(*t, s, 60);
    int skipped = 0;
    for (const auto& r : records) skipped += r.skipped;
    MESSAGE(std::string(core::to_string(opt)), " lr 10: ", skipped, " of ", records.size(), " steps skipped, last loss ",
            records.back().loss);
    CHECK(all_finite(t->parameters()));
    const core::TrainerState st = t->export_state();
    CHECK(all_finite(st.state1));
    CHECK(all_finite(st.state2));
  }
}

TEST_CASE("GPU precision switches through export_state/import_state keep masters, optimizer state and step counts") {
  const test::ValidationWatch validation;  // every trainer here enables the layer
  Setup s = setup(core::Precision::FP32);
  auto t = make_gpu(s);
  if (!t) return;
  int epoch = 0;
  train(*t, s, 7, epoch++);
  for (core::Precision next : {core::Precision::FP16, core::Precision::BF16, core::Precision::FP16,
                               core::Precision::FP16, core::Precision::FP32}) {
    CAPTURE(name(next));
    const core::TrainerState before = t->export_state();
    Setup n = s;
    n.cfg.precision = next;
    n.init = before.params;
    auto fresh = make_gpu(n);
    REQUIRE(fresh);
    fresh->import_state(before);
    const core::TrainerState after = fresh->export_state();
    CHECK(after.params == before.params);  // the fp32 masters, bit for bit
    CHECK(after.state1 == before.state1);
    CHECK(after.state2 == before.state2);
    CHECK(after.steps == before.steps);
    CHECK(after.optimizer_steps == before.optimizer_steps);
    if (next == core::Precision::FP16) {
      REQUIRE(after.loss_scaler.has_value());
      if (before.loss_scaler) {  // fp16 -> fp16 (e.g. a batch change): the scaler goes on where it was
        CHECK(after.loss_scaler->scale == before.loss_scaler->scale);
        CHECK(after.loss_scaler->growth_tracker == before.loss_scaler->growth_tracker);
        CHECK(after.loss_scaler->skipped == before.loss_scaler->skipped);
      } else {
        CHECK(after.loss_scaler->scale == n.cfg.loss_scale_init);
      }
    } else {
      CHECK_FALSE(after.loss_scaler.has_value());
    }
    // It trains on from there: the next steps count on and change the weights.
    const auto records = train(*fresh, n, 3, epoch++);
    CHECK(records.front().step == before.steps);
    CHECK(fresh->parameters() != before.params);
    t = std::move(fresh);
    s = n;
  }
}
