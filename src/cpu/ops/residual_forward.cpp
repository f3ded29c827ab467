// residual_forward: a transformer's residual connection (He et al. 2016), into a tensor of its own.
//   out (B,OC) = a (B,OC) + b (B,OC): a the branch's output (attention's projection, the MLP's), b the residual stream
//   it branched from; B rows (positions), OC the stream's width.
// Its backward needs no kernel: the stream's gradient reaches both inputs unchanged, and the trainers keep it in one
// tensor that the branch's LayerNorm backward adds to (layernorm_backward's accumulate).
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::ResidualParams>();
  float* out = b.f32(0);
  const float* x = b.f32(1);
  const float* y = b.f32(2);
  pool.parallel_for(p.N, grain_for(1.0), [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) out[i] = x[i] + y[i];
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::ResidualParams>();
  for (size_t i = 0; i < p.N; ++i) b[0][i] = b[1][i] + b[2][i];
}

}  // namespace

const Kernel residual_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef residual_forward{
    .bindings = {{.name = "out_", .access = Access::Write, .elem = Elem::Storage, .role = Role::Act,
                  .elements = shape::B_x_OC},
                 {.name = "a", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_OC},
                 {.name = "b", .access = Access::Read, .elem = Elem::Storage, .role = Role::Skip,
                  .elements = shape::B_x_OC}},
    .params_bytes = sizeof(core::ResidualParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(e.B * e.OC); },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::ResidualParams{u32(e.B * e.OC)}); },
    .flops = [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
    .bytes_read = [](const PlanEntry& e, Precision p) { return 2.0 * e.B * e.OC * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); }};

}  // namespace kernels
#endif
