// cpu::Trainer on a tiny synthetic problem (two Gaussian blobs): it learns, it is independent of the thread count, and
// its evaluation handles a partial last batch. (Its steps against the whole-step reference in double, in every
// precision, optimizer and toggle, are tests/test_train_step.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/trainer.hpp"

using core::Activation;

namespace {

// Two Gaussian blobs around (-1,-1) (class 0) and (1,1) (class 1), standard deviation 0.4 (Box-Muller).
core::Dataset blobs(int count, uint64_t seed) {
  core::Pcg32 rng(seed);
  core::Dataset d;
  d.name = "blobs";
  d.count = count;
  d.features = 2;
  d.classes = 2;
  for (int i = 0; i < count; ++i) {
    const int label = i % 2;
    for (int k = 0; k < 2; ++k) {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      const double n = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
      d.x.push_back(static_cast<float>((label ? 1.0 : -1.0) + 0.4 * n));
    }
    d.y.push_back(label);
  }
  return d;
}

struct Trained {
  double first_epoch_loss = 0, last_epoch_loss = 0;
  core::EvalResult eval;
  std::vector<float> params;
};

Trained train(const core::TrainConfig& cfg, const core::DataSplit& data, int epochs) {
  core::ModelShape shape({data.train.features, cfg.hidden[0], data.train.classes});
  auto trainer = cpu::make_trainer(cfg, data, core::init_parameters(shape, cfg.seed));
  Trained out;
  const int steps = core::steps_per_epoch(data.train.count, cfg.batch);
  long expected_step = 0;
  for (int e = 0; e < epochs; ++e) {
    trainer->begin_epoch(core::epoch_order(data.train.count, cfg.seed, e));
    for (int s = 0; s < steps; ++s) trainer->step(static_cast<size_t>(s) * cfg.batch);
    double sum = 0;
    const auto records = trainer->flush();
    REQUIRE(records.size() == static_cast<size_t>(steps));
    for (const auto& r : records) {
      CHECK(r.step == expected_step++);
      CHECK(r.kernel_ms.size() == trainer->plan().entries.size());
      CHECK(std::isfinite(r.loss));
      CHECK(r.loss_scale == 0.0f);  // fp32: no loss scaling
      CHECK_FALSE(r.skipped);
      sum += r.loss;
    }
    (e == 0 ? out.first_epoch_loss : out.last_epoch_loss) = sum / steps;
  }
  CHECK(trainer->flush().empty());
  out.eval = trainer->evaluate();
  out.params = trainer->parameters();
  CHECK(out.params.size() == shape.param_count);
  return out;
}

}  // namespace

TEST_CASE("cpu trainer learns two blobs (AdamW + ReLU, SGD + GELU) and is independent of the thread count") {
  core::DataSplit data{blobs(256, 1), blobs(100, 2)};  // 100 test samples: the last eval batch of 32 is partial
  core::TrainConfig cfg;
  cfg.hidden = {16};
  cfg.batch = 32;
  cfg.lr = 0.01f;
  cfg.threads = 2;
  for (int variant = 0; variant < 2; ++variant) {
    CAPTURE(variant);
    if (variant == 1) {
      cfg.optimizer = core::Optimizer::SGD;
      cfg.activation = Activation::GELU;
      cfg.lr = 0.05f;
    }
    const Trained t = train(cfg, data, 6);
    CHECK(t.last_epoch_loss < 0.5 * t.first_epoch_loss);
    CHECK(t.eval.accuracy > 0.9);
    CHECK(t.eval.loss < 0.3);
    if (variant == 1) {
      cfg.threads = 3;
      CHECK(train(cfg, data, 6).params == t.params);
    }
  }
}

TEST_CASE("cpu trainer: evaluate over partial batches equals one forward over the whole test set") {
  core::DataSplit data{blobs(64, 3), blobs(37, 4)};
  core::TrainConfig cfg;
  cfg.hidden = {8};
  cfg.batch = 16;
  cfg.threads = 2;
  core::ModelShape shape({2, 8, 2});
  const auto params = core::init_parameters(shape, 7);
  auto trainer = cpu::make_trainer(cfg, data, params);
  CHECK(std::string(trainer->backend()) == "cpu");
  CHECK(trainer->device_name().find("(2 threads, ") != std::string::npos);
  CHECK(trainer->plan().batch == 16);
  CHECK(trainer->plan().precision == core::Precision::FP32);
  CHECK(trainer->memory_usage_fp32() == trainer->memory_usage());
  CHECK(trainer->memory_usage().master_weights == 0);
  const auto eval = trainer->evaluate();

  // The same forward pass by the kernels' plain references in double, on the whole test set at once.
  const long N = 37;
  using V = std::vector<double>;
  auto slice = [&](size_t offset, size_t n) { return V(params.begin() + offset, params.begin() + offset + n); };
  V x(data.test.x.begin(), data.test.x.end()), labels(data.test.y.begin(), data.test.y.end());
  V w0 = slice(shape.weight_offset[0], 16), b0 = slice(shape.bias_offset[0], 8);
  V w1 = slice(shape.weight_offset[1], 16), b1 = slice(shape.bias_offset[1], 2);
  std::vector<V> layer0{V(N * 8), V(N * 8), x, w0, b0};
  cpu::run_reference({.op = core::Op::matmul_forward, .activation = true, .B = N, .C = 2, .OC = 8}, {}, layer0,
                     core::Precision::FP32);
  std::vector<V> layer1{V(N * 2), V(N * 2), layer0[0], w1, b1};
  cpu::run_reference({.op = core::Op::matmul_forward, .B = N, .C = 8, .OC = 2}, {}, layer1, core::Precision::FP32);
  core::StepArgs evaluation;
  evaluation.evaluation = true;
  std::vector<V> softmax{V(N), V(N * 2), V(N), layer1[0], labels, V()};
  cpu::run_reference({.op = core::Op::softmax_xent_forward_backward, .B = N, .C = 2}, evaluation, softmax,
                     core::Precision::FP32);
  double loss = 0, right = 0;
  for (long i = 0; i < N; ++i) loss += softmax[0][i], right += softmax[2][i];
  CHECK(eval.loss == doctest::Approx(loss / N).epsilon(1e-5));
  CHECK(eval.accuracy == doctest::Approx(right / N));
}
