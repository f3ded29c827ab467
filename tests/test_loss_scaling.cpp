// fp16 dynamic loss scaling over a sequence of steps, on the GPU and on the CPU alike: check_finite_grads, adamw_update
// and update_loss_scale run step after step on the same buffers (as a training step runs them), with a scripted
// pattern of overflowing gradients. Step by step, the scaler's scale, growth tracker and skipped count must be
// core::LossScaler's; a skipped step must leave the master weights, the optimizer state, the 16-bit weights and the
// step clock unchanged; an applied step must be the reference AdamW on the unscaled gradients, with t counting applied
// steps only. (The parity test checks each kernel once; this checks the state they carry between steps.)
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/loss_scaler.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"

namespace {

constexpr size_t kN = 1000;
const core::LossScalerOptions kOptions{1024.0f, 2.0f, 0.5f, 3};  // a short growth interval to see growths
const core::Precision kFp16 = core::Precision::FP16;

// What one backend holds between steps, read back after each.
struct State {
  std::vector<float> params, m;
  std::vector<uint16_t> weights16;
  core::LossScalerBuffer scaler{};
  std::vector<core::ScaleHistoryEntry> history;
};

// The step's settings: its read-back slot (t comes from the scaler's step clock in fp16).
core::StepArgs settings(uint32_t slot) {
  core::StepArgs s;
  s.lr = 1e-2f;
  s.weight_decay = 0.01f;
  s.slot = slot;
  s.scaler = kOptions;
  return s;
}

// The three kernels of a step's end, in plan order.
std::vector<core::PlanEntry> step_kernels() {
  std::vector<core::PlanEntry> out;
  for (core::Op op : {core::Op::check_finite_grads, core::Op::adamw_update, core::Op::update_loss_scale})
    out.push_back({.op = op, .N = kN});
  return out;
}

core::LossScalerBuffer initial_scaler() {
  core::LossScalerBuffer s{};
  s.scale = kOptions.init_scale;
  s.beta1_pow = s.beta2_pow = 1.0f;
  return s;
}

class CpuBackend {
 public:
  explicit CpuBackend(const std::vector<float>& params0, size_t steps)
      : params_(params0), m_(kN), v_(kN), grads_(kN), w16_(kN), history_(steps), scaler_(initial_scaler()) {
    for (size_t i = 0; i < kN; ++i) w16_[i] = core::float_to_fp16(params_[i]);
  }
  void step(const std::vector<uint16_t>& grads, uint32_t slot) {
    grads_ = grads;
    for (const core::PlanEntry& e : step_kernels()) {
      std::vector<void*> b;
      if (e.op == core::Op::check_finite_grads) b = {&scaler_, grads_.data()};
      if (e.op == core::Op::adamw_update)
        b = {params_.data(), m_.data(), v_.data(), grads_.data(), w16_.data(), &scaler_};
      if (e.op == core::Op::update_loss_scale) b = {&scaler_, history_.data()};
      cpu::run_kernel(e, settings(slot), b, {kFp16, pool_, ws_});
    }
  }
  State state() const { return {params_, m_, w16_, scaler_, history_}; }

 private:
  std::vector<float> params_, m_, v_;
  std::vector<uint16_t> grads_, w16_;
  std::vector<core::ScaleHistoryEntry> history_;
  core::LossScalerBuffer scaler_;
  cpu::ThreadPool pool_{2};
  cpu::Workspace16 ws_;
};

class GpuBackend {
 public:
  GpuBackend(vk::Context& ctx, const std::vector<float>& params0, size_t steps) : ctx_(ctx), kernels_(ctx, {}, kFp16) {
    std::vector<uint16_t> w16(kN);
    for (size_t i = 0; i < kN; ++i) w16[i] = core::float_to_fp16(params0[i]);
    params_ = test::to_buffer(ctx, params0, "params");
    m_ = test::to_buffer(ctx, std::vector<float>(kN), "m");
    v_ = test::to_buffer(ctx, std::vector<float>(kN), "v");
    grads_ = test::to_buffer(ctx, std::vector<uint16_t>(kN), "grads");
    w16_ = test::to_buffer(ctx, w16, "weights16");
    scaler_ = test::to_buffer(ctx, std::vector<core::LossScalerBuffer>{initial_scaler()}, "scaler");
    history_ = test::to_buffer(ctx, std::vector<core::ScaleHistoryEntry>(steps), "history");
    steps_ = steps;
    pool_ = vk::DescriptorPool(ctx, 3, 6);
    using Ranges = std::vector<vk::BufferRange>;
    sets_[0] = pool_.allocate(ctx, kernels_.pipeline(core::Op::check_finite_grads), Ranges{{&scaler_}, {&grads_}});
    sets_[1] = pool_.allocate(ctx, kernels_.pipeline(core::Op::adamw_update),
                              Ranges{{&params_}, {&m_}, {&v_}, {&grads_}, {&w16_}, {&scaler_}});
    sets_[2] = pool_.allocate(ctx, kernels_.pipeline(core::Op::update_loss_scale), Ranges{{&scaler_}, {&history_}});
  }
  void step(const std::vector<uint16_t>& grads, uint32_t slot) {
    grads_.upload(ctx_, grads.data(), grads.size() * 2);
    const auto kernels = step_kernels();
    ctx_.run_one_shot([&](VkCommandBuffer cmd) {
      for (size_t i = 0; i < kernels.size(); ++i) {
        if (i > 0) vk::compute_barrier(cmd);  // RAW: found_inf, then the optimizer's skip, then the scale update
        kernels_.dispatch(cmd, kernels[i], sets_[i], core::kernel_def(kernels[i].op).args(kernels[i], settings(slot)));
      }
    });
  }
  State state() {
    return {test::from_buffer<float>(ctx_, params_, kN), test::from_buffer<float>(ctx_, m_, kN),
            test::from_buffer<uint16_t>(ctx_, w16_, kN), test::from_buffer<core::LossScalerBuffer>(ctx_, scaler_, 1)[0],
            test::from_buffer<core::ScaleHistoryEntry>(ctx_, history_, steps_)};
  }

 private:
  vk::Context& ctx_;
  gpu::Kernels kernels_;
  vk::Buffer params_, m_, v_, grads_, w16_, scaler_, history_;
  size_t steps_ = 0;
  vk::DescriptorPool pool_;
  VkDescriptorSet sets_[3] = {};
};

template <typename Backend>
void run_script(Backend& backend, const std::string& who) {
  CAPTURE(who);
  // 1 = this step's gradients hold an inf or NaN. Covers growth after 3 clean steps, a single and a double overflow.
  const std::vector<int> script = {0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0};
  core::LossScaler scaler(kOptions);
  core::Pcg32 rng(22);
  std::vector<double> grads(kN);
  for (auto& g : grads) g = core::fp16_to_float(core::float_to_fp16(rng.uniform(-50.0f, 50.0f)));
  State before = backend.state();
  std::vector<double> p(before.params.begin(), before.params.end()), m(kN), v(kN);  // the reference's applied steps
  long applied = 0;
  for (size_t step = 0; step < script.size(); ++step) {
    CAPTURE(step);
    const float scale_used = scaler.scale();
    std::vector<uint16_t> bits(kN);
    for (size_t i = 0; i < kN; ++i) bits[i] = core::float_to_fp16(static_cast<float>(grads[i]));
    if (script[step]) bits[(step * 37) % kN] = step % 2 ? 0x7c00 : 0xfe01;  // +inf, or a NaN
    backend.step(bits, static_cast<uint32_t>(step));
    const State now = backend.state();
    const bool applied_now = scaler.update(script[step] != 0);
    CHECK(now.history[step].loss_scale == scale_used);
    CHECK(now.history[step].found_inf == static_cast<uint32_t>(script[step]));
    const core::LossScalerState want = scaler.export_state();
    CHECK(now.scaler.scale == want.scale);
    CHECK(now.scaler.growth_tracker == want.growth_tracker);
    CHECK(now.scaler.skipped == want.skipped);
    CHECK(now.scaler.found_inf == 0);  // consumed and cleared by update_loss_scale
    if (!applied_now) {
      CHECK(now.params == before.params);
      CHECK(now.m == before.m);
      CHECK(now.weights16 == before.weights16);
    } else {
      ++applied;
      // AdamW's plain reference (fp32 variant: no scaler) on the unscaled gradients, with t counting applied steps.
      core::StepArgs s = settings(0);
      s.t = applied;
      std::vector<std::vector<double>> b{p, m, v, grads, {}, {}};
      for (double& g : b[3]) g *= static_cast<double>(1.0f / scale_used);  // the shaders' unscaling multiply
      cpu::run_reference({.op = core::Op::adamw_update, .N = kN}, s, b, core::Precision::FP32);
      p = b[0], m = b[1], v = b[2];
      CHECK(now.params != before.params);
      double num = 0, den = 0;
      for (size_t i = 0; i < kN; ++i) {
        num += (now.params[i] - p[i]) * (now.params[i] - p[i]);
        den += p[i] * p[i];
      }
      CHECK(num / den <= core::tolerance(kFp16).nmse);
      size_t not_rounded = 0;
      for (size_t i = 0; i < kN; ++i) not_rounded += now.weights16[i] != core::float_to_fp16(now.params[i]);
      CHECK(not_rounded == 0);
    }
    CHECK(now.scaler.optimizer_steps == static_cast<uint32_t>(applied));  // the clock counts applied updates only
    before = now;
  }
  CHECK(scaler.skipped_steps() == 4);
}

}  // namespace

TEST_CASE("fp16 loss scaling over a scripted sequence of overflows: the CPU twins") {
  core::Pcg32 rng(21);
  std::vector<float> params0(kN);
  for (auto& x : params0) x = rng.uniform(-1.0f, 1.0f);
  CpuBackend cpu(params0, 16);
  run_script(cpu, "cpu");
}

TEST_CASE("fp16 loss scaling over a scripted sequence of overflows: the GPU shaders") {
  auto ctx = test::make_context("the GPU loss-scaling kernels");
  if (!ctx) return;
  std::string why;
  if (!gpu::precision_supported(ctx->info(), kFp16, &why)) {
    test::skip("the GPU loss-scaling kernels", why);
    return;
  }
  core::Pcg32 rng(21);
  std::vector<float> params0(kN);
  for (auto& x : params0) x = rng.uniform(-1.0f, 1.0f);
  {
    GpuBackend gpu(*ctx, params0, 16);
    run_script(gpu, "gpu");
  }
  test::check_no_validation_messages(ctx->validation_log());
}
