// The whole-step test: every backend x precision x optimizer x teaching toggle trains a few steps of a small MLP, and
// every step's loss, fp16's loss scale and skips, the step counters, the trained weights, the optimizer state and the
// evaluation are compared with the whole-step reference in double (cpu/train_step.hpp). The reference stores every
// tensor in the same type at the same places as the backends, so what may differ is only the backends' fp32
// arithmetic against exact arithmetic, and where that moves a value across a rounding boundary of its storage type:
//   - fp32: the kernels' sums in another order (each output a chain of fp32 fmas: relative error ~ K 2^-24 at worst,
//     ~ sqrt(K) 2^-24 typically), the approximate exp (1.3 ulp): ~1e-6 relative after a few steps.
//   - fp16 / bf16: those fp32 differences flip a stored value's rounding by one unit in the last place (2^-11, 2^-8)
//     where it lay within ~1e-7 of a rounding boundary: a small share of the values, each off by one 16-bit ulp, and
//     what is computed from them off by that share.
// The comparisons, per parameter tensor (each layer's weight and bias), are normalized mean squared errors against
// the reference: of the change of the weights over the steps (AdamW's update is normalized, so a gradient that is
// ~0 may flip its sign and move a weight by 2 lr: only a mean catches the rest), of AdamW's moments m and v / SGD's
// momentum buffer (linear in the gradients), and of each step's loss. The tolerances are those differences with a
// margin (measured worst cases are printed); a kernel that drops a batch row, a bias correction one step off or any
// other change of one kernel's arithmetic moves these figures by orders of magnitude more (tried: README, "Testing").
// Besides: in fp32 every toggle gives the same bits as the default on its backend (the README's promise), and the
// reference's own gradients equal central finite differences of its loss.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/config.hpp"
#include "core/dataset.hpp"
#include "cpu/train_step.hpp"
#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/kernels.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

using core::Optimizer;
using core::Precision;

namespace {

constexpr int kBatch = 16, kSteps = 4;
const Precision kPrecisions[] = {Precision::FP32, Precision::FP16, Precision::BF16};

// Features 12, hidden 20 and 9, classes 5: each layer's sizes below, between and beyond the GPU's 4-wide loads.
// The CNN's: 7x9 images of one channel (random pixels, 5 classes), conv 3 -> pool (3x4) -> conv 5 -> pool (1x2) ->
// dense 9 -> 5: odd sizes, a dropped last row and column at each pool.
const core::DataSplit& data(const core::TrainConfig& cfg) {
  static const core::DataSplit d = core::make_random(12, 5, kBatch * kSteps, 37, 7);
  static const core::DataSplit images = [] {
    core::DataSplit i = core::make_random(7 * 9, 5, kBatch * kSteps, 37, 8);
    for (core::Dataset* set : {&i.train, &i.test}) {
      set->height = 7;
      set->width = 9;
      set->channels = 1;
    }
    return i;
  }();
  return cfg.model == core::ModelKind::CNN ? images : d;
}

core::TrainConfig config(const std::string& backend, Precision p, Optimizer opt, const core::Execution& toggles) {
  core::TrainConfig cfg;
  cfg.dataset = "random";
  cfg.hidden = {20, 9};
  cfg.batch = kBatch;
  cfg.precision = p;
  cfg.optimizer = opt;
  // Every activation with both optimizers, across the precisions: AdamW relu, gelu, silu in fp32, fp16, bf16; SGD
  // gelu, silu, relu.
  cfg.activation = core::kActivations[(static_cast<int>(p) + (opt == Optimizer::AdamW ? 0 : 1)) % 3];
  cfg.lr = opt == Optimizer::AdamW ? 1e-2f : 0.1f;
  cfg.weight_decay = opt == Optimizer::AdamW ? 0.01f : 1e-3f;
  cfg.execution = toggles;
  cfg.backends = {backend};
  cfg.threads = 2;
  cfg.validation = backend == "gpu";
  cfg.seed = 3;
  return cfg;
}

// What a run leaves to compare.
struct Run {
  std::vector<core::StepRecord> records;
  core::TrainerState state;
  core::EvalResult eval;
};

Run train(core::Trainer& trainer, const core::TrainConfig& cfg) {
  trainer.begin_epoch(core::epoch_order(data(cfg).train.count, cfg.seed, 0));
  for (int s = 0; s < kSteps; ++s) trainer.step(static_cast<size_t>(s) * kBatch);
  Run r;
  r.records = trainer.flush();
  r.state = trainer.export_state();
  r.eval = trainer.evaluate();
  return r;
}

struct Reference {
  std::vector<cpu::reference::StepResult> steps;
  cpu::reference::TrainState state;
  core::EvalResult eval;
};

Reference reference(const core::TrainConfig& cfg) {
  const core::ModelShape shape = core::model_shape(cfg, data(cfg));
  Reference r{{}, cpu::reference::initial_state(cfg, core::init_parameters(shape, cfg.seed)), {}};
  const std::vector<uint32_t> order = core::epoch_order(data(cfg).train.count, cfg.seed, 0);
  for (int s = 0; s < kSteps; ++s)
    r.steps.push_back(cpu::reference::train_step(cfg, shape, data(cfg).train,
                                                 std::span(order).subspan(size_t(s) * kBatch, kBatch), r.state));
  r.eval = cpu::reference::evaluate(cfg, shape, data(cfg).test, r.state);
  return r;
}

// sum (got - ref)² / sum ref² over elements [begin, end) (the squared error alone where the reference is all 0).
double nmse(const std::vector<double>& got, const std::vector<double>& ref, size_t begin, size_t end) {
  double num = 0, den = 0;
  for (size_t i = begin; i < end; ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? num / den : num;
}

// The tolerances per storage precision (see the top): NMSE of weights' change, moments, loss and evaluation.
struct Tolerance {
  double state, loss;
};
Tolerance step_tolerance(Precision p) {
  if (p == Precision::FP32) return {1e-9, 1e-6};
  return {1e-5, 1e-4};
}

// The worst figures per precision, printed at the end of the test case.
std::map<std::string, double>& worst() {
  static std::map<std::string, double> w;
  return w;
}
void note(const std::string& what, double value) { worst()[what] = std::max(worst()[what], value); }

void compare(const Run& got, const Reference& ref, const core::TrainConfig& cfg, const std::string& who) {
  INFO(who);
  const core::ModelShape shape = core::model_shape(cfg, data(cfg));
  const Tolerance tol = step_tolerance(cfg.precision);
  const std::string p = core::to_string(cfg.precision);
  REQUIRE(got.records.size() == size_t(kSteps));
  for (int s = 0; s < kSteps; ++s) {
    CAPTURE(s);
    const double loss_error = std::fabs(got.records[s].loss - ref.steps[s].loss) / ref.steps[s].loss;
    note(p + " loss", loss_error);
    CHECK(loss_error <= tol.loss);
    CHECK(got.records[s].skipped == ref.steps[s].skipped);
    CHECK(got.records[s].loss_scale == ref.steps[s].loss_scale);
  }
  CHECK(got.state.steps == kSteps);
  CHECK(got.state.optimizer_steps == ref.state.t);
  if (cfg.precision == Precision::FP16) {
    REQUIRE(got.state.loss_scaler.has_value());
    CHECK(got.state.loss_scaler->scale == ref.state.scaler.scale);
    CHECK(got.state.loss_scaler->skipped == ref.state.scaler.skipped);
  }
  const std::vector<double> init(ref.state.params.size());  // the change of the weights from their initial values
  const std::vector<float> p0 = core::init_parameters(shape, cfg.seed);
  std::vector<double> moved(p0.size()), moved_ref(p0.size()), m(p0.size()), v(p0.size());
  for (size_t i = 0; i < p0.size(); ++i) {
    moved[i] = double(got.state.params[i]) - p0[i];
    moved_ref[i] = ref.state.params[i] - p0[i];
    m[i] = got.state.state1[i];
    if (!got.state.state2.empty()) v[i] = got.state.state2[i];
  }
  for (int l = 0; l < shape.layers(); ++l) {
    if (shape.kind(l) == core::LayerKind::Pool) continue;  // no parameters
    const size_t w = shape.weight_offset[l], b = shape.bias_offset[l], end = b + shape.bias_count(l);
    for (auto [begin, stop, name] : {std::tuple{w, w + shape.weight_count(l), "weight"}, std::tuple{b, end, "bias"}}) {
      CAPTURE(l);
      CAPTURE(std::string(name));
      const double moved_error = nmse(moved, moved_ref, begin, stop), m_error = nmse(m, ref.state.m, begin, stop);
      note(p + " weights' change", moved_error);
      note(p + " m", m_error);
      CHECK(moved_error <= tol.state);
      CHECK(m_error <= tol.state);
      if (cfg.optimizer == Optimizer::AdamW) {
        const double v_error = nmse(v, ref.state.v, begin, stop);
        note(p + " v", v_error);
        CHECK(v_error <= tol.state);
      }
    }
  }
  const double eval_error = std::fabs(got.eval.loss - ref.eval.loss) / ref.eval.loss;
  note(p + " evaluation loss", eval_error);
  CHECK(eval_error <= tol.loss);
  CHECK(std::fabs(got.eval.accuracy - ref.eval.accuracy) <= 1.0 / data(cfg).test.count + 1e-12);  // one flip at most
}

std::string describe(const core::TrainConfig& cfg) {
  return std::string(cfg.backends[0]) + " " + core::to_string(cfg.precision) + " " + core::to_string(cfg.optimizer) +
         " " + core::to_string(cfg.execution);
}

}  // namespace

TEST_CASE("every backend x precision x optimizer x teaching toggle follows the whole-step reference in double") {
  worst().clear();
  std::unique_ptr<gpu::DeviceCache> cache;  // one device and one compilation per precision for every GPU run
  const bool gpu = test::vulkan_device_or_skip("the GPU backend's runs");
  if (gpu) cache = std::make_unique<gpu::DeviceCache>();
  for (const std::string backend : {"cpu", "gpu"}) {
    if (backend == "gpu" && !gpu) continue;
    for (Precision p : kPrecisions)
      for (Optimizer opt : {Optimizer::AdamW, Optimizer::SGD}) {
        std::optional<Run> fused;
        for (int toggle = 0; toggle < 4; ++toggle) {
          core::Execution e;
          if (toggle == 1) e.unfused = true;
          if (toggle == 2) e.sync_every_step = true;
          if (toggle == 3) e.submit_per_kernel = true;
          if (backend == "cpu" && toggle >= 2) continue;  // the CPU's steps are synchronous kernel by kernel already
          const core::TrainConfig cfg = config(backend, p, opt, e);
          const core::ModelShape shape = core::model_shape(cfg, data(cfg));
          std::unique_ptr<core::Trainer> trainer;
          if (backend == "cpu") {
            trainer = cpu::make_trainer(cfg, data(cfg), core::init_parameters(shape, cfg.seed));
          } else {
            std::string why;
            if (!gpu::precision_supported(cache->device({cfg.device, true})->context.info(), p, &why)) {
              test::skip(describe(cfg), why);
              continue;
            }
            trainer = gpu::make_trainer(cfg, data(cfg), core::init_parameters(shape, cfg.seed), cache.get());
          }
          const Run run = train(*trainer, cfg);
          compare(run, reference(cfg), cfg, describe(cfg));
          if (toggle == 0) fused = run;
          if (p != Precision::FP32 || !fused || toggle == 0) continue;
          // fp32: the same bits as the default, step by step and weight by weight.
          INFO(describe(cfg) << ": the same bits as without the toggle");
          for (int s = 0; s < kSteps; ++s) CHECK(run.records[s].loss == fused->records[s].loss);
          CHECK(run.state.params == fused->state.params);
        }
      }
  }
  for (const auto& [what, value] : worst()) MESSAGE("worst " << what << ": " << value);
  if (cache) test::check_no_validation_messages(cache->device({-1, true})->context.validation_log());
}

TEST_CASE("the CNN: every backend x precision, fused and unfused, follows the whole-step reference in double") {
  // conv 3 -> pool -> conv 5 -> pool -> dense 9 -> 5 on 7x9 images (data()): every convolution and pooling kernel,
  // bias_backward and act_backward over pixel rows, the flattened image into a dense layer. AdamW and ReLU (the
  // optimizers and activations are the MLP's code, run above in every combination). The GPU runs fp32 and fp16 (its
  // loss scaling); its bf16 convolutions are in the parity test (lavapipe compiles each storage type's convolutions
  // anew, ~10 s of CI time per type).
  worst().clear();
  std::unique_ptr<gpu::DeviceCache> cache;
  const bool gpu = test::vulkan_device_or_skip("the GPU backend's CNN runs");
  if (gpu) cache = std::make_unique<gpu::DeviceCache>();
  for (const std::string backend : {"cpu", "gpu"}) {
    if (backend == "gpu" && !gpu) continue;
    for (Precision p : kPrecisions) {
      if (backend == "gpu" && p == Precision::BF16) continue;
      std::optional<Run> fused;
      for (bool unfused : {false, true}) {
        core::Execution e;
        e.unfused = unfused;
        core::TrainConfig cfg = config(backend, p, Optimizer::AdamW, e);
        cfg.model = core::ModelKind::CNN;
        cfg.conv = {3, 5};
        cfg.hidden = {9};
        const core::ModelShape shape = core::model_shape(cfg, data(cfg));
        REQUIRE(shape.describe() == "7x9x1-conv3-pool-conv5-pool-9-5");
        std::unique_ptr<core::Trainer> trainer;
        if (backend == "cpu") {
          trainer = cpu::make_trainer(cfg, data(cfg), core::init_parameters(shape, cfg.seed));
        } else {
          std::string why;
          if (!gpu::precision_supported(cache->device({cfg.device, true})->context.info(), p, &why)) {
            test::skip(describe(cfg), why);
            continue;
          }
          trainer = gpu::make_trainer(cfg, data(cfg), core::init_parameters(shape, cfg.seed), cache.get());
        }
        const Run run = train(*trainer, cfg);
        compare(run, reference(cfg), cfg, "CNN " + describe(cfg));
        if (!unfused) fused = run;
        if (p != Precision::FP32 || !fused || !unfused) continue;
        INFO("CNN " << describe(cfg) << ": the same bits as without the toggle");
        for (int s = 0; s < kSteps; ++s) CHECK(run.records[s].loss == fused->records[s].loss);
        CHECK(run.state.params == fused->state.params);
      }
    }
  }
  for (const auto& [what, value] : worst()) MESSAGE("CNN: worst " << what << ": " << value);
  if (cache) test::check_no_validation_messages(cache->device({-1, true})->context.validation_log());
}

TEST_CASE("fp16 from a loss scale that overflows: the same skipped steps, scales and weights as the reference") {
  // The initial scale: the smallest power of two at which the first step overflows, and no step of the run has its
  // largest scaled gradient within 10% of fp16's largest value (where a rounding could decide it either way).
  core::TrainConfig cfg = config("cpu", Precision::FP16, Optimizer::AdamW, {});
  cfg.loss_scale_init = 1;
  const double unscaled = reference(cfg).steps[0].overflow_margin;
  REQUIRE(unscaled > 0);
  bool chosen = false;
  for (double scale = std::exp2(std::ceil(std::log2(1 / unscaled))); !chosen && scale < 1e30; scale *= 2) {
    cfg.loss_scale_init = static_cast<float>(scale);
    const Reference ref = reference(cfg);
    bool clear = true;
    int skipped = 0;
    for (const auto& step : ref.steps) {
      clear &= std::fabs(step.overflow_margin - 1) > 0.1;
      skipped += step.skipped;
    }
    chosen = clear && skipped > 0 && skipped < kSteps;
  }
  REQUIRE_MESSAGE(chosen, "no initial scale gives both skipped and applied steps with a clear margin");
  MESSAGE("initial loss scale " << cfg.loss_scale_init);
  std::unique_ptr<gpu::DeviceCache> cache;
  for (const std::string backend : {"cpu", "gpu"})
    for (Optimizer opt : {Optimizer::AdamW, Optimizer::SGD}) {
      core::TrainConfig c = config(backend, Precision::FP16, opt, {});
      c.loss_scale_init = cfg.loss_scale_init;
      const core::ModelShape shape = core::model_shape(c, data(cfg));
      std::unique_ptr<core::Trainer> trainer;
      if (backend == "cpu") {
        trainer = cpu::make_trainer(c, data(cfg), core::init_parameters(shape, c.seed));
      } else {
        if (!test::vulkan_device_or_skip("fp16 overflow on the GPU")) continue;
        if (!cache) cache = std::make_unique<gpu::DeviceCache>();
        std::string why;
        if (!gpu::precision_supported(cache->device({c.device, true})->context.info(), Precision::FP16, &why)) {
          test::skip(describe(c), why);
          continue;
        }
        trainer = gpu::make_trainer(c, data(cfg), core::init_parameters(shape, c.seed), cache.get());
      }
      compare(train(*trainer, c), reference(c), c, describe(c) + " from scale " + std::to_string(c.loss_scale_init));
    }
  if (cache) test::check_no_validation_messages(cache->device({-1, true})->context.validation_log());
}

TEST_CASE("the whole-step reference's gradients equal central finite differences of its loss") {
  // SGD without momentum or decay and lr 1: one step moves every weight by exactly -gradient, so the gradient is
  // the weights before minus after; the loss at the weights before, each nudged by ±h, gives the finite difference.
  // (The CNN's convolution and pooling gradients: tests/test_cpu_conv_gradients.cpp, in double, where its max
  // pools' kinks do not blur a difference quotient.)
  for (core::Activation act : core::kActivations) {
    CAPTURE(std::string(core::to_string(act)));
    core::TrainConfig cfg = config("cpu", Precision::FP32, Optimizer::SGD, {});
    cfg.activation = act;
    cfg.lr = 1;
    cfg.momentum = 0;
    cfg.weight_decay = 0;
    const core::ModelShape shape = core::model_shape(cfg, data(cfg));
    const std::vector<uint32_t> rows = core::epoch_order(data(cfg).train.count, 1, 0);
    const std::span<const uint32_t> batch(rows.data(), kBatch);
    cpu::reference::TrainState start = cpu::reference::initial_state(cfg, core::init_parameters(shape, 5));
    cpu::reference::TrainState after = start;
    cpu::reference::train_step(cfg, shape, data(cfg).train, batch, after);
    auto loss_at = [&](const std::vector<double>& params) {
      cpu::reference::TrainState s = start;
      s.params = params;
      return cpu::reference::train_step(cfg, shape, data(cfg).train, batch, s).loss;
    };
    // The reference stores its tensors in fp32: h large enough that the rounding of a nudged weight is no issue.
    const double h = 1e-3;
    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < start.params.size(); i += 7) {
      const bool weight = std::fabs(start.params[i]) > 0;  // padding has no gradient
      if (!weight) continue;
      std::vector<double> up = start.params, down = start.params;
      up[i] += h;
      down[i] -= h;
      const double fd = (loss_at(up) - loss_at(down)) / (2 * h), grad = start.params[i] - after.params[i];
      ++checked;
      if (std::fabs(fd - grad) > 1e-4 + 1e-3 * std::fabs(grad) && ++bad <= 5)
        MESSAGE("parameter " << i << ": gradient " << grad << ", finite difference " << fd);
    }
    CHECK(checked > 50);
    CHECK(bad == 0);
  }
}
