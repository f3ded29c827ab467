// check_finite_grads (fp16 only, dynamic loss scaling): whether the step's gradients overflowed, before the update.
//   scaler.found_inf = 1 if any of grads (N) is inf or NaN (never cleared here: update_loss_scale consumes it)
// The 16-bit twin tests the exponent bits (all ones: fp16 0x7c00, bf16 0x7f80), so it holds whatever the
// floating-point flags of the build.
#include <atomic>
#include <cmath>

#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned16(const Bindings& b, const KernelArgs& a, Precision precision, ThreadPool& pool) {
  const auto p = a.as<core::CheckFiniteParams>();
  const uint16_t* grads = b.at<uint16_t>(1);
  const uint16_t exp = precision == Precision::FP16 ? 0x7c00u : 0x7f80u;  // inf and NaN: every exponent bit set
  std::atomic<bool> found_inf{false};
  pool.parallel_for(p.N, 262144, [&](size_t i0, size_t i1) {
    uint32_t bad = 0;  // an OR-reduction without an early exit vectorizes
    for (size_t i = i0; i < i1; ++i) bad |= (grads[i] & exp) == exp ? 1u : 0u;
    if (bad) found_inf.store(true, std::memory_order_relaxed);
  });
  if (found_inf.load(std::memory_order_relaxed)) b.at<core::LossScalerBuffer>(0)->found_inf = 1;
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::CheckFiniteParams>();
  for (uint32_t i = 0; i < p.N; ++i)
    if (!std::isfinite(b[1][i])) b[0][3] = 1;  // the scaler's found_inf
}

}  // namespace

const Kernel check_finite_grads{.tuned16 = tuned16, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef check_finite_grads{
    .bindings = {{.name = "scaler", .access = Access::ReadWrite, .elem = Elem::LossScaler, .role = Role::Scaler},
                 {.name = "grads", .access = Access::Read, .elem = Elem::Storage, .role = Role::Grads,
                  .elements = shape::N}},
    .params_bytes = sizeof(core::CheckFiniteParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .fp16_only = true,
    .grid_size = [](const PlanEntry& e) { return quads(static_cast<long>(e.N)); },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::CheckFiniteParams{static_cast<uint32_t>(e.N)}); },
    .flops = [](const PlanEntry&, Precision) { return 0.0; },  // a comparison per element, no arithmetic
    .bytes_read = [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); },
    .bytes_written = [](const PlanEntry&, Precision) { return 4.0; }};

}  // namespace kernels
#endif
