// Mixed precision in the GPU trainer: fp16 / bf16 training tracks fp32, dynamic loss scaling skips overflowed steps
// without touching the fp32 master weights and recovers, and a precision switch (export_state -> import_state into a
// trainer of another precision) loses nothing. On a 3,840-sample subset of Fashion-MNIST (the spiral, with a visible
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

TEST_CASE("GPU fp16 and bf16 training follow fp32: close losses, no skipped steps at the default scale, accuracy") {
  const test::ValidationWatch validation;  // every trainer here enables the layer
  Setup ref = setup(core::Precision::FP32);
  auto fp32 = make_gpu(ref);
  if (!fp32) return;
  const auto losses32 = train(*fp32, ref, 60);
  const double acc32 = fp32->evaluate().accuracy;
  for (core::Precision p : {core::Precision::FP16, core::Precision::BF16}) {
    CAPTURE(std::string(core::to_string(p)));
    Setup s = setup(p);
    auto t = make_gpu(s);
    REQUIRE(t);
    const auto losses = train(*t, s, 60);
    REQUIRE(losses.size() == losses32.size());
    // The first steps see the same batches from the same weights: the only difference is 16-bit storage (fp16 has
    // 11 significant bits, bf16 8: relative errors of about 2^-11 and 2^-8 per rounding, a few roundings deep).
    const double rtol = p == core::Precision::FP16 ? 5e-3 : 3e-2;
    for (int i = 0; i < 10; ++i) {
      CAPTURE(i);
      CHECK(losses[i].loss == doctest::Approx(losses32[i].loss).epsilon(rtol));
    }
    for (const auto& r : losses) {
      CHECK(r.skipped == false);  // 2^16 is no overflow for this model's gradients
      CHECK(r.loss_scale == (p == core::Precision::FP16 ? 65536.0f : 0.0f));
    }
    const double acc = t->evaluate().accuracy;
    MESSAGE(name(p), ": test accuracy ", acc, " (fp32 ", acc32, ")");
    CHECK(acc32 > 0.6);  // the fp32 run itself learned something: the comparison means something
    CHECK(std::fabs(acc - acc32) <= 0.02);
    CHECK(all_finite(t->parameters()));
  }
}

TEST_CASE("GPU fp16, forced overflow (initial loss scale 2^40): steps are skipped with the weights untouched, the scale "
          "halves each time, then training recovers") {
  const test::ValidationWatch validation;  // every trainer here enables the layer
  Setup s = setup(core::Precision::FP16);
  s.cfg.loss_scale_init = 0x1p40f;
  s.cfg.readback_interval = 1;
  auto t = make_gpu(s);
  if (!t) return;
  const int per_epoch = core::steps_per_epoch(s.data.train.count, s.cfg.batch);
  t->begin_epoch(core::epoch_order(s.data.train.count, s.cfg.seed, 0));
  float expected_scale = s.cfg.loss_scale_init;
  int skipped = 0;
  bool recovered = false;
  std::vector<float> losses;
  std::vector<float> previous = s.init;
  for (int i = 0; i < per_epoch; ++i) {
    CAPTURE(i);
    t->step(static_cast<size_t>(i) * static_cast<size_t>(s.cfg.batch));
    const auto records = t->flush();
    REQUIRE(records.size() == 1);
    const core::StepRecord& r = records[0];
    CHECK(r.loss_scale == expected_scale);
    const auto params = t->parameters();
    if (r.skipped) {
      CHECK(params == previous);  // bit for bit: no update touched the fp32 masters
      if (!recovered) CHECK(params == s.init);
      expected_scale *= 0.5f;
      ++skipped;
    } else {
      CHECK(params != previous);
      recovered = true;
      losses.push_back(r.loss);
    }
    CHECK(all_finite(params));
    previous = params;
  }
  MESSAGE("skipped ", skipped, " steps; scale now ", expected_scale);
  CHECK(skipped >= 10);  // 2^40 / 64 x O(1) gradients overflows fp16 (65504) for many halvings
  CHECK(recovered);
  CHECK(t->parameters() != s.init);
  REQUIRE(losses.size() >= 4);
  CHECK(losses.back() < losses.front());
  const core::TrainerState state = t->export_state();
  REQUIRE(state.loss_scaler.has_value());
  CHECK(state.loss_scaler->skipped == static_cast<uint32_t>(skipped));
  CHECK(state.optimizer_steps == per_epoch - skipped);  // skipped steps do not count as optimizer steps
}

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
