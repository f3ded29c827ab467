// loss_reduce: the step's mean loss into its slot of the read-back ring.
//   loss_history[slot] = sum(losses (B)) / count  (count = B, or the positions whose targets count)
// The CPU twin accumulates in double (the GPU in fp32, by a tree reduction in one workgroup).
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool&) {
  const auto p = a.as<core::LossReduceParams>();
  const float* losses = b.f32(1);
  double sum = 0;
  for (uint32_t r = 0; r < p.B; ++r) sum += static_cast<double>(losses[r]);
  b.f32(0)[p.slot] = static_cast<float>(p.count > 0 ? sum / static_cast<double>(p.count) : 0.0);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::LossReduceParams>();
  double sum = 0;
  for (uint32_t r = 0; r < p.B; ++r) sum += b[1][r];
  b[0][p.slot] = p.count > 0 ? sum / p.count : 0;
}

}  // namespace

const Kernel loss_reduce{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef loss_reduce{
    .bindings = {{.name = "loss_history", .access = Access::Write, .elem = Elem::F32, .role = Role::LossHistory},
                 {.name = "losses", .access = Access::Read, .elem = Elem::F32, .role = Role::Losses}},
    .params_bytes = sizeof(core::LossReduceParams),
    .grid = Grid::Single,
    .local_size = 256,
    .shared_floats_per_invocation = 1,  // the tree's partial sums
    .grid_size = [](const PlanEntry&) { return std::array<uint64_t, 2>{1, 1}; },
    .args = [](const PlanEntry& e,
               const StepArgs& s) { return KernelArgs::of(core::LossReduceParams{u32(e.B), s.slot, u32(counted(e))}); },
    .flops = [](const PlanEntry& e, Precision) { return static_cast<double>(e.B); },
    .bytes_read = [](const PlanEntry& e, Precision) { return e.B * 4.0; },  // fp32 per-sample losses
    .bytes_written = [](const PlanEntry&, Precision) { return 4.0; }};

}  // namespace kernels
#endif
