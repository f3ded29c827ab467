// matmul_backward_data: a dense layer's input gradient (the previous layer's output gradient).
//   dinp (B,C) = dout (B,OC) · weight (OC,C)  (overwritten)
#include "cpu/gemm.hpp"
#include "cpu/gemm_portable.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MatmulBackwardParams>();
  const long B = p.B, C = p.C, OC = p.OC;
  float* dinp = b.f32(0);
  const float* dout = b.f32(1);
  const float* weight = b.f32(2);
  if (active_micro_kernel() != nullptr) return gemm(dinp, C, {dout, OC, 1}, {weight, C, 1}, B, C, OC, pool);
  portable_gemm(dinp, dout, OC, 1, weight, B, C, OC, pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::MatmulBackwardParams>();
  const long B = p.B, C = p.C, OC = p.OC;
  for (long r = 0; r < B; ++r)
    for (long c = 0; c < C; ++c) {
      double sum = 0;
      for (long o = 0; o < OC; ++o) sum += b[1][r * OC + o] * b[2][o * C + c];
      b[0][r * C + c] = sum;
    }
}

}  // namespace

const Kernel matmul_backward_data{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef matmul_backward_data{
    .bindings = {{.name = "dinp", .access = Access::Write, .elem = Elem::Storage, .role = Role::DLayerIn,
                  .sum = true, .elements = shape::B_x_C},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DPreact,
                  .elements = shape::B_x_OC},
                 {.name = "weight", .access = Access::Read, .elem = Elem::Storage, .role = Role::Weight,
                  .elements = shape::OC_x_C}},
    .params_bytes = sizeof(core::MatmulBackwardParams),
    .grid = Grid::Gemm,
    .local_size = 0,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), uint64_t(e.C)}; },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(core::MatmulBackwardParams{u32(e.B), u32(e.C), u32(e.OC), u32(e.B)});
        },
    .flops = [](const PlanEntry& e, Precision) { return 2.0 * e.B * e.C * e.OC; },
    .bytes_read = [](const PlanEntry& e, Precision p) { return (e.B * e.OC + e.OC * e.C) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p); },
    // operands: dout, weight
    .gemm = {.operands = {1, 2},
             .vec4_ok = vec4_c_oc,
             .largest_operand = dense_largest}};

}  // namespace kernels
#endif
