// matmul_backward_weight: a dense layer's weight gradient.
//   dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C)  (overwritten, no accumulation)
// The GPU may cut K (the batch) into split-K slices (PlanEntry::split_k, gpu/gemm_config.hpp); the CPU never does.
#include "cpu/gemm.hpp"
#include "cpu/gemm_portable.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MatmulBackwardParams>();
  const long B = p.B, C = p.C, OC = p.OC;
  float* dweight = b.f32(0);
  const float* dout = b.f32(1);
  const float* inp = b.f32(2);
  // dweight (OC,C) = A (OC,B) · inp (B,C) with A(o,b) = dout[b*OC + o]
  if (active_micro_kernel() != nullptr) return gemm(dweight, C, {dout, 1, OC}, {inp, C, 1}, OC, C, B, pool);
  portable_gemm(dweight, dout, 1, OC, inp, OC, C, B, pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::MatmulBackwardParams>();
  const long B = p.B, C = p.C, OC = p.OC;
  for (long o = 0; o < OC; ++o)
    for (long c = 0; c < C; ++c) {
      double sum = 0;
      for (long r = 0; r < B; ++r) sum += b[1][r * OC + o] * b[2][r * C + c];
      b[0][o * C + c] = sum;
    }
}

}  // namespace

const Kernel matmul_backward_weight{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

// split-K's fp32 partial products (split_k x OC x C), 0 when not split.
double split_partials_bytes(const PlanEntry& e) { return e.split_k > 1 ? 4.0 * e.split_k * e.OC * e.C : 0.0; }

}  // namespace

const core::KernelDef matmul_backward_weight{
    .bindings = {{.name = "dweight", .access = Access::Write, .elem = Elem::Storage, .role = Role::DWeight,
                  .sum = true, .elements = shape::OC_x_C},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DPreact,
                  .elements = shape::B_x_OC},
                 {.name = "inp", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_C}},
    .params_bytes = sizeof(core::MatmulBackwardParams),
    .grid = Grid::Gemm,
    .local_size = 0,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.OC), uint64_t(e.C)}; },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(core::MatmulBackwardParams{u32(e.B), u32(e.C), u32(e.OC), u32(e.k_slice())});
        },
    // split-K (PlanEntry::split_k > 1): the reduce adds split_k - 1 partials per output, and the fp32
    // partials (split_k x OC x C) are written by the GEMM pass and read by the reduce
    .flops =
        [](const PlanEntry& e, Precision) {
          return 2.0 * e.B * e.C * e.OC + (e.split_k > 1 ? (e.split_k - 1.0) * e.C * e.OC : 0.0);
        },
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return (e.B * e.OC + e.B * e.C) * e_of(p) + split_partials_bytes(e); },
    .bytes_written = [](const PlanEntry& e,
                        Precision p) { return e.OC * e.C * e_of(p) + split_partials_bytes(e); },
    // operands: dout, inp
    .gemm = {.split_k = core::SplitK::Rows,
             .operands = {1, 2},
             .vec4_ok = vec4_c_oc,
             .largest_operand = dense_largest}};

}  // namespace kernels
#endif
