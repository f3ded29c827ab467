// matmul_forward: a dense layer's forward pass (torch.nn.Linear, then the activation in hidden layers).
//   out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)); preact (B,OC) = the value before act (for act_backward)
// The logits layer has no activation (apply_act 0: out is the affine result, preact untouched). --unfused (add_bias 0):
// out = the plain sums, bias_add and act_forward follow as kernels of their own.
#include "cpu/elementwise_loops.hpp"
#include "cpu/gemm.hpp"
#include "cpu/gemm_portable.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

// Rows [b0, b0 + width) x columns [o0, o1) of the sums in out (B,OC), or in preact with apply_act: adds the bias
// and applies the activation from preact into out (the fused epilogue, on each finished tile while it is in cache).
void epilogue(float* out, float* preact, const float* bias, long OC, long b0, long width, long o0, long o1,
              bool apply_act, core::Activation act, const ElementwiseLoops& loops) {
  if (bias == nullptr) return;  // --unfused: the plain sums
  float* sums = (apply_act ? preact : out) + b0 * OC + o0;  // at the CPU's SIMD level (elementwise_loops.hpp)
  loops.bias_activate_rows(sums, bias + o0, out + b0 * OC + o0, OC, width, o1 - o0, apply_act, act);
}

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MatmulForwardParams>();
  const bool apply_act = p.apply_act != 0;
  const core::Activation act = activation_of(p.act);
  const long B = p.B, C = p.C, OC = p.OC;
  float* out = b.f32(0);
  float* preact = apply_act ? b.f32(1) : nullptr;
  const float* inp = b.f32(2);
  const float* weight = b.f32(3);
  const float* bias = p.add_bias != 0 ? b.f32(4) : nullptr;
  float* sums = apply_act ? preact : out;
  const ElementwiseLoops& loops = elementwise_loops();
  if (active_micro_kernel() != nullptr) {  // the packed SIMD GEMM (gemm.hpp), bias and activation per finished tile
    const GemmEpilogue tile = [&](long m0, long m1, long n0, long n1) {
      epilogue(out, preact, bias, OC, m0, m1 - m0, n0, n1, apply_act, act, loops);
    };
    gemm(sums, OC, {inp, C, 1}, {weight, 1, C}, B, OC, C, pool, bias ? &tile : nullptr);
    return;
  }
  portable_gemm_forward(sums, inp, weight, B, C, OC, pool, [&](long b0, long width, long o0, long o1) {
    epilogue(out, preact, bias, OC, b0, width, o0, o1, apply_act, act, loops);
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::MatmulForwardParams>();
  const long B = p.B, C = p.C, OC = p.OC;
  const double *inp = ref(b, 2), *weight = ref(b, 3);
  for (long r = 0; r < B; ++r)
    for (long o = 0; o < OC; ++o) {
      double sum = p.add_bias ? b[4][o] : 0.0;
      for (long c = 0; c < C; ++c) sum += inp[r * C + c] * weight[o * C + c];
      if (p.apply_act) {
        b[1][r * OC + o] = sum;
        b[0][r * OC + o] = ref_activation(sum, activation_of(p.act));
      } else {
        b[0][r * OC + o] = sum;
      }
    }
}

}  // namespace

const Kernel matmul_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef matmul_forward{
    .bindings = {{.name = "out", .access = Access::Write, .elem = Elem::Storage, .role = Role::Act,
                  .sum = true, .elements = shape::B_x_OC},
                 {.name = "preact", .access = Access::Write, .elem = Elem::Storage, .role = Role::Preact,
                  .sum = true,
                  .elements = [](const PlanEntry& e, const StepArgs&) -> size_t {
                    return e.activation && e.epilogue ? static_cast<size_t>(e.B * e.OC) : 0;
                  }},
                 {.name = "inp", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_C},
                 {.name = "weight", .access = Access::Read, .elem = Elem::Storage, .role = Role::Weight,
                  .elements = shape::OC_x_C},
                 {.name = "bias", .access = Access::Read, .elem = Elem::Storage, .role = Role::Bias,
                  .elements = [](const PlanEntry& e, const StepArgs&) -> size_t {
                    return e.epilogue ? static_cast<size_t>(e.OC) : 0;
                  }}},
    .params_bytes = sizeof(core::MatmulForwardParams),
    .grid = Grid::Gemm,
    .local_size = 0,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), uint64_t(e.OC)}; },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          const uint32_t apply_act = e.epilogue && e.activation ? 1u : 0u;
          return KernelArgs::of(core::MatmulForwardParams{u32(e.B), u32(e.C), u32(e.OC), apply_act,
                                                          act_code(s.activation), e.epilogue ? 1u : 0u});
        },
    // multiply-adds plus the bias (without the epilogue: the multiply-adds); the activation is not counted
    .flops = [](const PlanEntry& e,
                Precision) { return 2.0 * e.B * e.C * e.OC + (e.epilogue ? e.B * e.OC : 0); },
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return (e.B * e.C + e.OC * e.C + (e.epilogue ? e.OC : 0)) * e_of(p); },
    // out, and preact for act_backward (fused hidden layers)
    .bytes_written = [](const PlanEntry& e,
                        Precision p) { return e.B * e.OC * e_of(p) * (e.epilogue && e.activation ? 2 : 1); },
    // operands: inp, weight
    .gemm = {.operands = {2, 3},
             .vec4_ok = vec4_c,
             .largest_operand = dense_largest}};

}  // namespace kernels
#endif
