// sgd_update: SGD with momentum over the flat parameters, as torch.optim.SGD (dampening 0, no Nesterov):
//   g += wd*p; buf = momentum*buf + g (buf = g at t == 1); p -= lr*buf
// params, momentum_buf: fp32 (N) in every precision; grads (N) in the storage type. The 16-bit variants also write
// weights16 (N), the rounding of the new params; fp16 skips an overflowed step and unscales the others, as adamw_update.
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

[[gnu::always_inline]] inline void update(float* params, float* momentum_buf, const float* grads, size_t i0, size_t i1,
                                          float mu, float wd, float step, bool first) {
  for (size_t i = i0; i < i1; ++i) {
    const float g = grads[i] + wd * params[i];
    const float buf = first ? g : mu * momentum_buf[i] + g;
    momentum_buf[i] = buf;
    params[i] -= step * buf;
  }
}

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::SgdParams>();
  float *params = b.f32(0), *buf = b.f32(1);
  const float* grads = b.f32(2);
  const float mu = p.momentum, wd = p.weight_decay, step = p.lr;
  const bool first = p.t <= 1;
  pool.parallel_for(p.N, grain_for(4.0),
                    [=](size_t i0, size_t i1) { update(params, buf, grads, i0, i1, mu, wd, step, first); });
}

// 16-bit: per chunk, the grads widened (and unscaled), the fp32 update, the new params rounded into weights16.
void tuned16(const Bindings& b, const KernelArgs& a, Precision precision, ThreadPool& pool) {
  const auto p = a.as<core::SgdParams>();
  const Unscale u = unscale(b.at<core::LossScalerBuffer>(4), p.t);
  if (u.skip) return;
  float *params = b.f32(0), *buf = b.f32(1);
  const uint16_t* grads = b.at<uint16_t>(2);
  uint16_t* weights16 = b.at<uint16_t>(3);
  update16(grads, weights16, params, p.N, 16 * kChunk16, u.grad_scale, precision, pool,
           [&](size_t i0, const float* g, size_t n) {
             update(params + i0, buf + i0, g, 0, n, p.momentum, p.weight_decay, p.lr, u.t <= 1);
           });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::SgdParams>();
  const core::LossScalerBuffer s = ref(b, 4) ? scaler_of(b[4]) : core::LossScalerBuffer{};
  const Unscale u = unscale(ref(b, 4) ? &s : nullptr, p.t);
  if (u.skip) return;
  for (uint32_t i = 0; i < p.N; ++i) {
    const double g = b[2][i] * u.grad_scale + double(p.weight_decay) * b[0][i];
    b[1][i] = u.t <= 1 ? g : double(p.momentum) * b[1][i] + g;
    b[0][i] -= double(p.lr) * b[1][i];
    if (ref(b, 3)) b[3][i] = b[0][i];  // weights16: the new masters (rounded by whoever compares)
  }
}

}  // namespace

const Kernel sgd_update{.tuned = tuned, .tuned16 = tuned16, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

// params and the momentum buffer read and written (fp32); grads in the storage type (with loss scaling also the
// scaler's 16 bytes); in 16-bit the weights copy written.
double bytes_read(const PlanEntry& e, Precision p) { return 2 * n_of(e) * 4 + n_of(e) * e_of(p) + (loss_scaled(p) ? 16 : 0); }
double bytes_written(const PlanEntry& e, Precision p) { return 2 * n_of(e) * 4 + (e_of(p) < 4 ? n_of(e) * e_of(p) : 0); }

}  // namespace

const core::KernelDef sgd_update{
    .bindings = {{.name = "params", .access = Access::ReadWrite, .elem = Elem::F32, .role = Role::Params},
                 {.name = "momentum_buf", .access = Access::ReadWrite, .elem = Elem::F32, .role = Role::State1},
                 {.name = "grads", .access = Access::Read, .elem = Elem::Storage, .role = Role::Grads,
                  .elements = shape::N},
                 {.name = "weights16", .access = Access::Write, .elem = Elem::Storage, .role = Role::Weights16,
                  .when = When::SixteenBit, .elements = shape::N},
                 {.name = "scaler", .access = Access::Read, .elem = Elem::LossScaler, .role = Role::Scaler,
                  .when = When::LossScaling}},
    .params_bytes = sizeof(core::SgdParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(static_cast<long>(e.N)); },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          return KernelArgs::of(core::SgdParams{static_cast<uint32_t>(e.N), s.lr, s.momentum, s.weight_decay,
                                                static_cast<uint32_t>(s.t)});
        },
    // decay 2, momentum 2, update 2; with loss scaling the unscaling multiply
    .flops = [](const PlanEntry& e, Precision p) { return 6 * n_of(e) + (loss_scaled(p) ? n_of(e) : 0); },
    .bytes_read = bytes_read,
    .bytes_written = bytes_written};

}  // namespace kernels
#endif
