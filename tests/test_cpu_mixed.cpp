// cpu::Trainer in mixed precision (fp16 with dynamic loss scaling, bf16) on the spiral: a diverging fp16 run never
// puts inf or NaN into the fp32 masters, the whole state carries across precisions, and the trainer holds the memory
// its shapes say. (Its steps against the whole-step reference, skipped fp16 steps included, are
// tests/test_train_step.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/config.hpp"
#include "core/dataset.hpp"
#include "cpu/trainer.hpp"

using core::Precision;

namespace {

// 2 arms, 300 training points each (600; 18 steps of 32 per epoch), 100 test points each. Two arms learn reliably
// within a few hundred steps (three arms at this size need more, and their accuracy after a short run depends on
// the rounding noise more than on the precision).
const core::DataSplit& spiral() {
  static const core::DataSplit data = core::make_spiral(2, 300, 100, 0.02f, 5);
  return data;
}

core::TrainConfig config(Precision p) {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.hidden = {64, 64};
  cfg.batch = 32;
  cfg.lr = 1e-2f;
  cfg.threads = 2;
  cfg.seed = 3;
  cfg.precision = p;
  return cfg;
}

std::unique_ptr<core::Trainer> make(const core::TrainConfig& cfg, const std::vector<float>* params = nullptr) {
  const core::ModelShape shape = core::model_shape(cfg, spiral());
  return cpu::make_trainer(cfg, spiral(), params ? *params : core::init_parameters(shape, cfg.seed));
}

// `steps` training steps from the trainer's current position (epochs in core::epoch_order, as the run loop does);
// `done` counts the steps taken before, so that a rebuilt trainer continues in the same epoch at the same batch.
std::vector<core::StepRecord> train(core::Trainer& t, const core::TrainConfig& cfg, long steps, long done = 0) {
  const long per_epoch = core::steps_per_epoch(spiral().train.count, cfg.batch);
  std::vector<core::StepRecord> out;
  for (long s = done; s < done + steps; ++s) {
    if (s % per_epoch == 0 || s == done)
      t.begin_epoch(core::epoch_order(spiral().train.count, cfg.seed, static_cast<int>(s / per_epoch)));
    t.step(static_cast<size_t>(s % per_epoch) * static_cast<size_t>(cfg.batch));
    for (auto& r : t.flush()) out.push_back(std::move(r));
  }
  return out;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

TEST_CASE("mixed precision: a diverging fp16 run never puts inf or NaN into the fp32 masters") {
  struct Case {
    core::Optimizer opt;
    float lr;
  };
  for (const Case c : {Case{core::Optimizer::SGD, 10.0f}, Case{core::Optimizer::AdamW, 5.0f}}) {
    const std::string name = core::to_string(c.opt);
    CAPTURE(name);
    auto cfg = config(Precision::FP16);
    cfg.optimizer = c.opt;
    cfg.lr = c.lr;
    auto t = make(cfg);
    std::vector<float> before = t->parameters();
    long skipped = 0;
    for (long s = 0; s < 150; ++s) {
      const auto rec = train(*t, cfg, 1, s);
      const auto now = t->parameters();
      if (rec.at(0).skipped) {
        ++skipped;
        CHECK(now == before);  // a skipped step leaves the masters alone, bit for bit
      }
      if (!all_finite(now)) {
        FAIL_CHECK("non-finite fp32 master after step " << s);
        break;
      }
      before = now;
    }
    MESSAGE(std::string(core::to_string(c.opt)) << " lr " << c.lr << ": " << skipped << " of 150 steps skipped");
    CHECK(skipped > 0);  // the run did overflow, so the skip path was exercised
  }
}

TEST_CASE("mixed precision: state carried fp32 -> fp16 -> bf16 -> fp32 bit for bit; fp16 -> fp16 keeps the scale") {
  auto same = [](const core::TrainerState& a, const core::TrainerState& b) {
    CHECK(a.optimizer == b.optimizer);
    CHECK(a.params == b.params);
    CHECK(a.state1 == b.state1);
    CHECK(a.state2 == b.state2);
    CHECK(a.steps == b.steps);
    CHECK(a.optimizer_steps == b.optimizer_steps);
  };
  auto t32 = make(config(Precision::FP32));
  train(*t32, config(Precision::FP32), 7);
  const auto s0 = t32->export_state();
  CHECK_FALSE(s0.loss_scaler.has_value());

  auto t16 = make(config(Precision::FP16));
  t16->import_state(s0);
  const auto s1 = t16->export_state();
  same(s1, s0);
  REQUIRE(s1.loss_scaler.has_value());
  CHECK(s1.loss_scaler->scale == 65536.0f);  // no scaler in the state: loss_scale_init
  train(*t16, config(Precision::FP16), 5, 7);
  const auto s2 = t16->export_state();
  CHECK(s2.optimizer_steps == s0.optimizer_steps + 5);

  auto tbf = make(config(Precision::BF16));
  tbf->import_state(s2);
  const auto s3 = tbf->export_state();
  same(s3, s2);
  CHECK_FALSE(s3.loss_scaler.has_value());
  // The imported trainer runs round(masters): the same model as a bf16 trainer built on those masters.
  auto fresh = make(config(Precision::BF16), &s2.params);
  const auto e1 = tbf->evaluate(), e2 = fresh->evaluate();
  CHECK(e1.loss == e2.loss);
  CHECK(e1.accuracy == e2.accuracy);

  auto back = make(config(Precision::FP32));
  back->import_state(s3);
  same(back->export_state(), s3);

  // fp16 -> fp16 (a rebuild, e.g. another thread count): the loss scaler's state carries over, and the rebuilt
  // trainer continues exactly as the original would have.
  auto cfg = config(Precision::FP16);
  cfg.loss_scale_init = 0x1p40f;
  auto a = make(cfg);
  train(*a, cfg, 25);  // at least 19 of them skipped (see above): scale and skip count moved
  const auto sa = a->export_state();
  REQUIRE(sa.loss_scaler.has_value());
  CHECK(sa.loss_scaler->scale < 0x1p40f);
  auto cfg_b = config(Precision::FP16);  // another loss_scale_init: the imported state wins
  cfg_b.threads = 1;
  auto b = make(cfg_b);
  b->import_state(sa);
  const auto sb = b->export_state();
  same(sb, sa);
  REQUIRE(sb.loss_scaler.has_value());
  CHECK(sb.loss_scaler->scale == sa.loss_scaler->scale);
  CHECK(sb.loss_scaler->skipped == sa.loss_scaler->skipped);
  CHECK(sb.loss_scaler->growth_tracker == sa.loss_scaler->growth_tracker);
  const auto ra = train(*a, cfg, 10, 25), rb = train(*b, cfg_b, 10, 25);
  for (size_t i = 0; i < ra.size(); ++i) {
    CAPTURE(i);
    CHECK(ra[i].loss == rb[i].loss);
    CHECK(ra[i].loss_scale == rb[i].loss_scale);
    CHECK(ra[i].skipped == rb[i].skipped);
  }
  CHECK(a->parameters() == b->parameters());
}

TEST_CASE("mixed precision: memory from the shapes; 16-bit tensors halve; memory_usage_fp32 is the fp32 trainer's") {
  for (core::Optimizer opt : {core::Optimizer::AdamW, core::Optimizer::SGD}) {
    const std::string name = core::to_string(opt);
    CAPTURE(name);
    auto cfg32 = config(Precision::FP32);
    cfg32.optimizer = opt;
    auto t32 = make(cfg32);
    const core::MemoryUsage m32 = t32->memory_usage();
    CHECK(t32->memory_usage_fp32() == m32);
    CHECK(m32.master_weights == 0);

    const core::ModelShape shape = core::model_shape(cfg32, spiral());
    const size_t P = shape.param_count, B = static_cast<size_t>(cfg32.batch);
    size_t elems = B * static_cast<size_t>(shape.inputs());  // x_batch
    for (int l = 0; l < shape.layers(); ++l)  // hidden: preact, act, dact (dpreact in place); logits: act, dlogits
      elems += B * static_cast<size_t>(shape.fan_out(l)) * (l < shape.layers() - 1 ? 3 : 2);
    const size_t fixed = 3 * 4 * B;  // int32 labels, fp32 losses, int32 correct flags
    const size_t state = (opt == core::Optimizer::AdamW ? 2 : 1) * 4 * P;
    CHECK(m32.weights == 4 * P);
    CHECK(m32.activations == 4 * elems + fixed);

    for (Precision p : {Precision::FP16, Precision::BF16}) {
      const std::string name = core::to_string(p);
      CAPTURE(name);
      auto cfg = cfg32;
      cfg.precision = p;
      auto t = make(cfg);
      const core::MemoryUsage m = t->memory_usage();
      CHECK(m.weights == 2 * P);
      CHECK(m.weights * 2 == m32.weights);
      CHECK(m.master_weights == 4 * P);
      CHECK(m.gradients == 2 * P);
      CHECK(m.gradients * 2 == m32.gradients);
      CHECK(m.optimizer_state == state);
      CHECK(m.activations == 2 * elems + fixed);
      CHECK(m.activations - fixed == (m32.activations - fixed) / 2);
      CHECK(m.dataset == 0);
      // The Workspace16 arena: the largest kernel of a step, matmul_forward16 of layer 1 with its activation here
      // (inputs 2, so L2's 64x64 weights and the B x 64 tensors dominate: B·C + OC·C + OC + 2·B·OC at C = OC = 64),
      // each operand padded to 16 floats.
      auto pad = [](size_t n) { return (n + 15) / 16 * 16; };
      const size_t arena = 4 * (pad(B * 64) + pad(64 * 64) + pad(64) + 2 * pad(B * 64));
      // fp16: the loss scaler (32 bytes) and its history (8 bytes per read-back slot).
      const size_t scaler = p == Precision::FP16 ? 32 + 8 * static_cast<size_t>(cfg.readback_interval) : 0;
      CHECK(m.workspace == m32.workspace + arena + scaler);
      // Fixed from construction: training and evaluation allocate nothing more.
      train(*t, cfg, 3);
      t->evaluate();
      CHECK(t->memory_usage() == m);
      // The fp32 comparison is the fp32 trainer's own figure (no arena, no separate masters).
      CHECK(t->memory_usage_fp32() == m32);
    }
  }
}
