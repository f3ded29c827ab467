// bias_add (--unfused): the bias of a dense layer as a kernel of its own, after a matmul_forward without epilogue. It
// reads back the (B,OC) output the GEMM just wrote and writes it again: the traffic that fusing saves.
//   out (B,OC) += bias (OC), in place (the same fp32 addition as matmul_forward's epilogue)
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::BiasAddParams>();
  float* out = b.f32(0);
  const float* bias = b.f32(1);
  const size_t OC = p.OC;
  pool.parallel_for(p.B, grain_for(static_cast<double>(OC)), [=](size_t b0, size_t b1) {
    for (size_t r = b0; r < b1; ++r) {
      float* row = out + r * OC;
      for (size_t o = 0; o < OC; ++o) row[o] += bias[o];
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::BiasAddParams>();
  for (uint32_t r = 0; r < p.B; ++r)
    for (uint32_t o = 0; o < p.OC; ++o) b[0][r * p.OC + o] += b[1][o];
}

}  // namespace

const Kernel bias_add{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef bias_add{
    .bindings = {{.name = "out", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::Act,
                  .elements = shape::B_x_OC},
                 {.name = "bias", .access = Access::Read, .elem = Elem::Storage, .role = Role::Bias,
                  .elements = shape::OC}},
    .params_bytes = sizeof(core::BiasAddParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(e.B * e.OC); },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::BiasAddParams{u32(e.B), u32(e.OC)}); },
    .flops = [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
    .bytes_read = [](const PlanEntry& e, Precision p) { return (e.B * e.OC + e.OC) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); }};

}  // namespace kernels
#endif
