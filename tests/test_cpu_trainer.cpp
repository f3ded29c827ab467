// cpu::Trainer on a tiny synthetic problem (two Gaussian blobs): it learns, it is independent of the thread count,
// its evaluation handles a partial last batch, and its steps equal the CPU kernels wired by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/rng.hpp"
#include "cpu/kernels.hpp"
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

  cpu::ThreadPool pool(1);
  const long N = 37;
  std::vector<float> hidden(N * 8), pre(N * 8), logits(N * 2), losses(N);
  std::vector<int32_t> correct(N);
  const float* p = params.data();
  cpu::matmul_forward(hidden.data(), pre.data(), data.test.x.data(), p + shape.weight_offset[0],
                      p + shape.bias_offset[0], N, 2, 8, true, Activation::ReLU, pool);
  cpu::matmul_forward(logits.data(), static_cast<float*>(nullptr), hidden.data(), p + shape.weight_offset[1],
                      p + shape.bias_offset[1], N, 8, 2, false, Activation::ReLU, pool);
  cpu::softmax_xent_forward_backward(losses.data(), static_cast<float*>(nullptr), correct.data(), logits.data(),
                                     data.test.y.data(), N, 2, 1.0f, pool);
  double right = 0;
  for (int c : correct) right += c;
  CHECK(eval.loss == doctest::Approx(cpu::loss_reduce(losses.data(), N)).epsilon(1e-6));
  CHECK(eval.accuracy == doctest::Approx(right / N));
}

TEST_CASE("cpu trainer: three steps equal the kernels wired by hand (AdamW t = 1, 2, 3, default weight decay)") {
  core::DataSplit data{blobs(48, 5), blobs(8, 6)};
  core::TrainConfig cfg;
  cfg.hidden = {8};
  cfg.batch = 16;
  cfg.threads = 3;
  cfg.activation = Activation::GELU;
  core::ModelShape shape({2, 8, 2});
  std::vector<float> p = core::init_parameters(shape, 9);
  auto trainer = cpu::make_trainer(cfg, data, p);
  const auto order = core::epoch_order(48, 9, 0);
  trainer->begin_epoch(order);

  cpu::ThreadPool pool(1);
  const long B = 16;
  const size_t P = p.size();
  std::vector<float> g(P), m(P), v(P);  // zero
  std::vector<float> x(B * 2), pre(B * 8), h(B * 8), logits(B * 2), losses(B), dlogits(B * 2), dh(B * 8), dpre(B * 8);
  std::vector<int32_t> y(B);
  auto W = [&](int l) { return p.data() + shape.weight_offset[l]; };
  auto dW = [&](int l) { return g.data() + shape.weight_offset[l]; };
  for (int s = 0; s < 3; ++s) {
    trainer->step(static_cast<size_t>(s * B));
    cpu::gather_batch(x.data(), y.data(), data.train.x.data(), data.train.y.data(), order.data() + s * B, B, 2, pool);
    cpu::matmul_forward(h.data(), pre.data(), x.data(), W(0), p.data() + shape.bias_offset[0], B, 2, 8, true,
                        Activation::GELU, pool);
    cpu::matmul_forward(logits.data(), static_cast<float*>(nullptr), h.data(), W(1), p.data() + shape.bias_offset[1],
                        B, 8, 2, false, Activation::GELU, pool);
    cpu::softmax_xent_forward_backward(losses.data(), dlogits.data(), static_cast<int32_t*>(nullptr), logits.data(),
                                       y.data(), B, 2, 1.0f / B, pool);
    cpu::matmul_backward_weight(dW(1), dlogits.data(), h.data(), B, 8, 2, pool);
    cpu::bias_backward(g.data() + shape.bias_offset[1], dlogits.data(), B, 2, pool);
    cpu::matmul_backward_data(dh.data(), dlogits.data(), W(1), B, 8, 2, pool);
    cpu::act_backward(dpre.data(), dh.data(), pre.data(), dpre.size(), Activation::GELU, pool);
    cpu::matmul_backward_weight(dW(0), dpre.data(), x.data(), B, 2, 8, pool);
    cpu::bias_backward(g.data() + shape.bias_offset[0], dpre.data(), B, 8, pool);
    cpu::adamw_update(p.data(), m.data(), v.data(), g.data(), P, cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, 0.01f,
                      s + 1, pool);
    const auto rec = trainer->flush();
    REQUIRE(rec.size() == 1);
    CHECK(rec[0].loss == cpu::loss_reduce(losses.data(), B));
  }
  CHECK(trainer->parameters() == p);
}
