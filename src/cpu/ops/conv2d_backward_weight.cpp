// conv2d_backward_weight: a convolutional layer's weight gradient, NHWC.
//   dweight (OC,KS,KS,C) [oc,ky,kx,c] = sum over b, y, x of dout (B,OH,OW,OC) [b,y,x,oc] · inp (B,H,W,C)
//   [b, y+ky-pad, x+kx-pad, c] (terms outside the input are 0), overwritten. The bias gradient is bias_backward over
// the B*OH*OW pixel rows of dout.
#include "cpu/conv.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  conv_backward_weight_gemm(b.f32(0), b.f32(1), b.f32(2), conv_shape(a.as<core::Conv2dBackwardParams>()), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::Conv2dBackwardParams>();
  const long H = p.H, W = p.W, C = p.C, OC = p.OC, OH = p.OH, OW = p.OW, KS = p.KS, pad = p.pad;
  const double *dout = ref(b, 1), *inp = ref(b, 2);
  for (long o = 0; o < OC; ++o)
    for (long ky = 0; ky < KS; ++ky)
      for (long kx = 0; kx < KS; ++kx)
        for (long c = 0; c < C; ++c) {
          double sum = 0;
          for (long n = 0; n < long(p.B); ++n)
            for (long y = 0; y < OH; ++y)
              for (long x = 0; x < OW; ++x) {
                const long iy = y + ky - pad, ix = x + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += dout[((n * OH + y) * OW + x) * OC + o] * inp[((n * H + iy) * W + ix) * C + c];
              }
          b[0][((o * KS + ky) * KS + kx) * C + c] = sum;
        }
}

}  // namespace

const Kernel conv2d_backward_weight{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef conv2d_backward_weight{
    .bindings = {{.name = "dweight",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::DWeight,
                  .sum = true,
                  .elements = shape::conv_weight},
                 {.name = "dout",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DPreact,
                  .elements = shape::image_out},
                 {.name = "inp",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::image_in}},
    .params_bytes = sizeof(core::Conv2dBackwardParams),
    .grid = Grid::Conv,
    .local_size = 0,
    // the implicit GEMM's output: {M = OC, N = KS*KS*C}, summed over K = B*OH*OW pixels
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{uint64_t(e.OC), uint64_t(conv_taps(e))};
        },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(conv_backward_params(e)); },
    .flops = [](const PlanEntry& e, Precision) { return 2.0 * conv_pixels(e) * e.OC * conv_taps(e); },
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return (conv_pixels(e) * e.OC + double(e.B) * e.H * e.W * e.C) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.OC * conv_taps(e) * e_of(p); },
    // operands: dout, inp
    .gemm = {.split_k = core::SplitK::Images,
             .operands = {1, 2},
             .vec4_ok = vec4_c_oc,
             .largest_operand = conv_largest,
             .texel_lanes_along_m = true}};

}  // namespace kernels
#endif
