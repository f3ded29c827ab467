// bias_add (--unfused): the bias of a dense layer as a kernel of its own, after a matmul_forward without epilogue. It
// reads back the (B,OC) output the GEMM just wrote and writes it again: the traffic that fusing saves.
//   out (B,OC) += bias (OC), in place (the same fp32 addition as matmul_forward's epilogue)
#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::BiasAddParams>();
  float* out = b.f32(0);
  const float* bias = b.f32(1);
  const size_t OC = p.OC;
  // The epilogue's own loop at the CPU's SIMD level (elementwise_loops.hpp), without the activation: the same addition
  // as fast as the fused path's, so that --unfused shows the traffic it adds, not a narrower loop.
  const ElementwiseLoops& loops = elementwise_loops();
  pool.parallel_for(p.B, grain_for(static_cast<double>(OC)), [=, &loops](size_t b0, size_t b1) {
    const long rows = static_cast<long>(b1 - b0), n = static_cast<long>(OC);
    loops.bias_activate_rows(out + b0 * OC, bias, out + b0 * OC, n, rows, n, false, core::Activation::ReLU);
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
