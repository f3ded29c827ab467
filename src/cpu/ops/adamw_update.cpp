// adamw_update: the AdamW optimizer step over the flat parameters (Loshchilov & Hutter 2019), exactly
// torch.optim.AdamW's update for step t >= 1:
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²; p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
// params, m, v: fp32 (N) in every precision; grads (N) in the storage type. Mixed precision (Micikevicius et al. 2018):
// the 16-bit variants also write weights16 (N), the rounding of the new params, which the other kernels read; fp16
// reads the loss scaler: a step whose gradients overflowed is skipped (nothing written), the others unscaled by
// 1 / scale, and t taken from the scaler's step clock.
#include <cmath>

#include "cpu/ops/op.hpp"
#include "core/power.hpp"
#include "cpu/elementwise_loops.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

// The update's scalars for step t, in torch's order of operations: decay, moments, then
// p -= step_size * m / (sqrt(v) / sqrt(bc2) + eps); the bias corrections in double as torch computes them.
AdamWCoefficients coefficients(const core::AdamWParams& p, long t) {
  const double bc1 = 1.0 - core::integer_power(static_cast<double>(p.beta1), static_cast<uint64_t>(t));
  const double bc2 = 1.0 - core::integer_power(static_cast<double>(p.beta2), static_cast<uint64_t>(t));
  return {static_cast<float>(1.0 - static_cast<double>(p.lr) * p.weight_decay), static_cast<float>(p.lr / bc1),
          static_cast<float>(1.0 / std::sqrt(bc2)), p.beta1, p.beta2, p.eps};
}

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::AdamWParams>();
  float *params = b.f32(0), *m = b.f32(1), *v = b.f32(2);
  const float* grads = b.f32(3);
  const AdamWCoefficients k = coefficients(p, p.t);
  const ElementwiseLoops& loops = elementwise_loops();  // the SIMD level's loop (elementwise_loops.hpp)
  pool.parallel_for(p.N, grain_for(8.0), [&](size_t i0, size_t i1) {
    loops.adamw(params + i0, m + i0, v + i0, grads + i0, static_cast<long>(i1 - i0), k);
  });
}

// 16-bit: one pass; per chunk, the grads widened (and unscaled) into an L1 buffer, the fp32 update while params, m, v
// are in L1, the new params rounded into weights16.
void tuned16(const Bindings& b, const KernelArgs& a, Precision precision, ThreadPool& pool) {
  const auto p = a.as<core::AdamWParams>();
  const Unscale u = unscale(b.at<core::LossScalerBuffer>(5), p.t);
  if (u.skip) return;
  float *params = b.f32(0), *m = b.f32(1), *v = b.f32(2);
  const uint16_t* grads = b.at<uint16_t>(3);
  uint16_t* weights16 = b.at<uint16_t>(4);
  const AdamWCoefficients k = coefficients(p, u.t);
  const ElementwiseLoops& loops = elementwise_loops();
  update16(grads, weights16, params, p.N, 8 * kChunk16, u.grad_scale, precision, pool, [&](size_t i0, const float* g,
           size_t n) { loops.adamw(params + i0, m + i0, v + i0, g, static_cast<long>(n), k); });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::AdamWParams>();
  const core::LossScalerBuffer s = ref(b, 5) ? scaler_of(b[5]) : core::LossScalerBuffer{};
  const Unscale u = unscale(ref(b, 5) ? &s : nullptr, p.t);
  if (u.skip) return;
  const double beta1 = p.beta1, beta2 = p.beta2, lr = p.lr;
  const double bc1 = 1 - core::integer_power(beta1, static_cast<uint64_t>(u.t));
  const double bc2 = 1 - core::integer_power(beta2, static_cast<uint64_t>(u.t));
  for (uint32_t i = 0; i < p.N; ++i) {
    double& param = b[0][i];
    double &m = b[1][i], &v = b[2][i];
    const double g = b[3][i] * u.grad_scale;
    param -= lr * p.weight_decay * param;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    param -= lr * (m / bc1) / (std::sqrt(v / bc2) + p.eps);
    if (ref(b, 4)) b[4][i] = param;  // weights16: the new masters (rounded by whoever compares)
  }
}

}  // namespace

const Kernel adamw_update{.tuned = tuned, .tuned16 = tuned16, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

// params, m, v read and written (fp32); grads read in the storage type (with loss scaling also the scaler's scale and
// found_inf, 16 bytes); in 16-bit the weights copy written.
double bytes_read(const PlanEntry& e, Precision p) { return 3 * n_of(e) * 4 + n_of(e) * e_of(p) + (loss_scaled(p) ? 16 : 0); }
double bytes_written(const PlanEntry& e, Precision p) { return 3 * n_of(e) * 4 + (e_of(p) < 4 ? n_of(e) * e_of(p) : 0); }

}  // namespace

const core::KernelDef adamw_update{
    .bindings = {{.name = "params", .access = Access::ReadWrite, .elem = Elem::F32, .role = Role::Params},
                 {.name = "m", .access = Access::ReadWrite, .elem = Elem::F32, .role = Role::State1},
                 {.name = "v", .access = Access::ReadWrite, .elem = Elem::F32, .role = Role::State2},
                 {.name = "grads", .access = Access::Read, .elem = Elem::Storage, .role = Role::Grads,
                  .elements = shape::N},
                 {.name = "weights16", .access = Access::Write, .elem = Elem::Storage, .role = Role::Weights16,
                  .when = When::SixteenBit, .elements = shape::N},
                 {.name = "scaler", .access = Access::Read, .elem = Elem::LossScaler, .role = Role::Scaler,
                  .when = When::LossScaling}},
    .params_bytes = sizeof(core::AdamWParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(static_cast<long>(e.N)); },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          // torch.optim.AdamW's bias corrections for step t, in double as torch computes them in Python floats.
          const float bc1 = static_cast<float>(1.0 - core::integer_power(double(s.beta1), static_cast<uint64_t>(s.t)));
          const float bc2 = static_cast<float>(1.0 - core::integer_power(double(s.beta2), static_cast<uint64_t>(s.t)));
          return KernelArgs::of(core::AdamWParams{static_cast<uint32_t>(e.N), s.lr, s.beta1, s.beta2, s.eps,
                                                  s.weight_decay, bc1, bc2, static_cast<uint32_t>(s.t)});
        },
    // decay 2, m 3, v 4, bias corrections 2, sqrt/divide/update 4; with loss scaling the unscaling multiply
    .flops = [](const PlanEntry& e, Precision p) { return 15 * n_of(e) + (loss_scaled(p) ? n_of(e) : 0); },
    .bytes_read = bytes_read,
    .bytes_written = bytes_written};

}  // namespace kernels
#endif
