// conv2d_forward: a convolutional layer's forward pass (torch.nn.Conv2d with stride 1 and zero padding, then the
// activation), on NHWC activations (shaders/common/kernel_params.h).
//   out (B,OH,OW,OC) = act(conv(inp (B,H,W,C), weight (OC,KS,KS,C)) + bias (OC)); preact = the value before act
// OH = H + 2 pad - KS + 1. As a GEMM: (B*OH*OW, KS*KS*C) patches · weight (OC, KS*KS*C)ᵀ, so out is (B*OH*OW, OC)
// and the bias, activation and --unfused modes are matmul_forward's (add_bias 0: the plain sums).
#include "cpu/elementwise_loops.hpp"
#include "cpu/conv.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::Conv2dForwardParams>();
  const bool apply_act = p.apply_act != 0;
  const core::Activation act = activation_of(p.act);
  const long OC = p.OC;
  float* out = b.f32(0);
  float* preact = apply_act ? b.f32(1) : nullptr;
  const float* bias = p.add_bias != 0 ? b.f32(4) : nullptr;
  float* sums = apply_act ? preact : out;
  // The bias and activation on each finished block of pixel rows, while it is in cache; the activation at the CPU's
  // SIMD level (elementwise_loops.hpp).
  const ElementwiseLoops& loops = elementwise_loops();
  const ConvEpilogue epilogue = [&](long m0, long m1) {
    loops.bias_activate_rows(sums + m0 * OC, bias, out + m0 * OC, OC, m1 - m0, OC, apply_act, act);
  };
  conv_forward_gemm(sums, b.f32(2), b.f32(3), conv_shape(p), pool, bias ? epilogue : ConvEpilogue{});
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::Conv2dForwardParams>();
  const long H = p.H, W = p.W, C = p.C, OC = p.OC, OH = p.OH, OW = p.OW, KS = p.KS, pad = p.pad;
  const double *inp = ref(b, 2), *weight = ref(b, 3);
  for (long n = 0; n < long(p.B); ++n)
    for (long y = 0; y < OH; ++y)
      for (long x = 0; x < OW; ++x)
        for (long o = 0; o < OC; ++o) {
          double sum = p.add_bias ? b[4][o] : 0.0;
          for (long ky = 0; ky < KS; ++ky)
            for (long kx = 0; kx < KS; ++kx) {
              const long iy = y + ky - pad, ix = x + kx - pad;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;  // zero padding
              for (long c = 0; c < C; ++c)
                sum += inp[((n * H + iy) * W + ix) * C + c] * weight[((o * KS + ky) * KS + kx) * C + c];
            }
          const long i = ((n * OH + y) * OW + x) * OC + o;
          if (p.apply_act) {
            b[1][i] = sum;
            b[0][i] = ref_activation(sum, activation_of(p.act));
          } else {
            b[0][i] = sum;
          }
        }
}

}  // namespace

const Kernel conv2d_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef conv2d_forward{
    .bindings = {{.name = "out",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::Act,
                  .sum = true,
                  .elements = shape::image_out},
                 {.name = "preact",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::Preact,
                  .sum = true,
                  .elements = [](const PlanEntry& e, const StepArgs& s) -> size_t {
                    return e.activation && e.epilogue ? shape::image_out(e, s) : 0;
                  }},
                 {.name = "inp",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::image_in},
                 {.name = "weight",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::Weight,
                  .elements = shape::conv_weight},
                 {.name = "bias",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::Bias,
                  .elements = [](const PlanEntry& e, const StepArgs&) -> size_t {
                    return e.epilogue ? static_cast<size_t>(e.OC) : 0;
                  }}},
    .params_bytes = sizeof(core::Conv2dForwardParams),
    .grid = Grid::Conv,
    .local_size = 0,
    // the implicit GEMM's output: {M = B*OH*OW pixels, N = OC channels}
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{uint64_t(conv_pixels(e)), uint64_t(e.OC)};
        },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          const uint32_t apply_act = e.epilogue && e.activation ? 1u : 0u;
          return KernelArgs::of(core::Conv2dForwardParams{
              u32(e.B), u32(e.H), u32(e.W), u32(e.C), u32(e.OC), u32(e.OH()), u32(e.OW()), u32(e.KS),
              u32(e.pad), apply_act, act_code(s.activation), e.epilogue ? 1u : 0u});
        },
    // every tap of the kernel counted, padding included (as profilers count a convolution), plus the bias
    .flops = [](const PlanEntry& e,
                Precision) { return conv_pixels(e) * e.OC * (2.0 * conv_taps(e) + (e.epilogue ? 1 : 0)); },
    .bytes_read =
        [](const PlanEntry& e, Precision p) {
          return (double(e.B) * e.H * e.W * e.C + e.OC * conv_taps(e) + (e.epilogue ? e.OC : 0)) * e_of(p);
        },
    .bytes_written =
        [](const PlanEntry& e, Precision p) {
          return conv_pixels(e) * e.OC * e_of(p) * (e.epilogue && e.activation ? 2 : 1);
        },
    // operands: inp, weight
    .gemm = {.operands = {2, 3},
             .vec4_ok = vec4_c_oc,
             .largest_operand = conv_largest,
             .texel_lanes_along_m = true}};

}  // namespace kernels
#endif
