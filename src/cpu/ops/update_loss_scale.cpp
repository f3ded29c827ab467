// update_loss_scale (fp16 only, dynamic loss scaling): GradScaler's update of the loss scale after the optimizer
// (torch's _amp_update_scale_), and the optimizer's step clock, on the 32-byte scaler state
// (core::LossScalerBuffer):
//   history[slot] = (scale, found_inf); overflow: scale *= backoff, tracker = 0, skipped += 1; clean: tracker += 1, at
//   growth_interval scale *= growth (unless that is inf) and tracker = 0, optimizer_steps += 1, beta powers *= beta;
//   found_inf = 0.
#include <cmath>

#include "core/loss_scaler.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

// The CPU twin applies the host's GradScaler (core::LossScaler) to the device-format state.
void tuned(const Bindings& b, const KernelArgs& a, ThreadPool&) {
  const auto p = a.as<core::UpdateLossScaleParams>();
  auto& s = *b.at<core::LossScalerBuffer>(0);
  b.at<core::ScaleHistoryEntry>(1)[p.slot] = {s.scale, s.found_inf};
  core::LossScaler scaler({s.scale, p.growth_factor, p.backoff_factor, p.growth_interval});
  scaler.import_state({s.scale, s.growth_tracker, s.skipped, 0});
  if (scaler.update(s.found_inf != 0)) {  // the step clock advances with every applied update
    s.optimizer_steps += 1;
    s.beta1_pow *= p.beta1;
    s.beta2_pow *= p.beta2;
  }
  const core::LossScalerState next = scaler.export_state();
  s.scale = next.scale;
  s.growth_tracker = next.growth_tracker;
  s.skipped = next.skipped;
  s.found_inf = 0;
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::UpdateLossScaleParams>();
  core::LossScalerBuffer s = scaler_of(b[0]);
  b[1][2 * p.slot] = s.scale;
  b[1][2 * p.slot + 1] = s.found_inf;
  if (s.found_inf != 0) {
    s.scale = static_cast<float>(double(s.scale) * p.backoff_factor);
    s.growth_tracker = 0;
    s.skipped += 1;
  } else {
    s.growth_tracker += 1;
    if (s.growth_tracker >= p.growth_interval) {
      const double grown = double(s.scale) * p.growth_factor;
      if (std::isfinite(static_cast<float>(grown))) s.scale = static_cast<float>(grown);
      s.growth_tracker = 0;
    }
    s.optimizer_steps += 1;
    s.beta1_pow = static_cast<float>(double(s.beta1_pow) * p.beta1);
    s.beta2_pow = static_cast<float>(double(s.beta2_pow) * p.beta2);
  }
  s.found_inf = 0;
  store_scaler(b[0], s);
}

}  // namespace

const Kernel update_loss_scale{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef update_loss_scale{
    .bindings = {{.name = "scaler", .access = Access::ReadWrite, .elem = Elem::LossScaler, .role = Role::Scaler},
                 {.name = "history", .access = Access::Write, .elem = Elem::ScaleHistory,
                  .role = Role::ScaleHistory}},
    .params_bytes = sizeof(core::UpdateLossScaleParams),
    .grid = Grid::Single,
    .local_size = 1,
    .fp16_only = true,
    .grid_size = [](const PlanEntry&) { return std::array<uint64_t, 2>{1, 1}; },
    .args =
        [](const PlanEntry&, const StepArgs& s) {
          return KernelArgs::of(core::UpdateLossScaleParams{s.scaler.growth_factor, s.scaler.backoff_factor,
                                                            s.scaler.growth_interval, s.slot, s.beta1,
                                                            s.beta2});
        },
    .flops = [](const PlanEntry&, Precision) { return 1.0; },
    .bytes_read = [](const PlanEntry&, Precision) { return 16.0; },           // the scaler state
    .bytes_written = [](const PlanEntry&, Precision) { return 16.0 + 8.0; }};

}  // namespace kernels
#endif
