// conv2d_backward_data: a convolutional layer's input gradient (stride 1: the convolution of the output gradient
// with the flipped kernel), NHWC.
//   dinp (B,H,W,C) [b,y,x,c] = sum over ky, kx, oc of dout (B,OH,OW,OC) [b, y+pad-ky, x+pad-kx, oc] x
//   weight [oc,ky,kx,c]
// (terms outside the output are 0), overwritten.
#include "cpu/conv.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  conv_backward_data_gemm(b.f32(0), b.f32(1), b.f32(2), conv_shape(a.as<core::Conv2dBackwardParams>()), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::Conv2dBackwardParams>();
  const long H = p.H, W = p.W, C = p.C, OC = p.OC, OH = p.OH, OW = p.OW, KS = p.KS, pad = p.pad;
  const double *dout = ref(b, 1), *weight = ref(b, 2);
  for (long n = 0; n < long(p.B); ++n)
    for (long y = 0; y < H; ++y)
      for (long x = 0; x < W; ++x)
        for (long c = 0; c < C; ++c) {
          double sum = 0;
          for (long ky = 0; ky < KS; ++ky)
            for (long kx = 0; kx < KS; ++kx) {
              const long oy = y + pad - ky, ox = x + pad - kx;
              if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
              for (long o = 0; o < OC; ++o)
                sum += dout[((n * OH + oy) * OW + ox) * OC + o] * weight[((o * KS + ky) * KS + kx) * C + c];
            }
          b[0][((n * H + y) * W + x) * C + c] = sum;
        }
}

}  // namespace

const Kernel conv2d_backward_data{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef conv2d_backward_data{
    .bindings = {{.name = "dinp",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::DLayerIn,
                  .sum = true,
                  .elements = shape::image_in},
                 {.name = "dout",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DPreact,
                  .elements = shape::image_out},
                 {.name = "weight",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::Weight,
                  .elements = shape::conv_weight}},
    .params_bytes = sizeof(core::Conv2dBackwardParams),
    .grid = Grid::Conv,
    .local_size = 0,
    // the implicit GEMM's output: {M = B*H*W pixels, N = C channels}
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{uint64_t(e.B * e.H * e.W), uint64_t(e.C)};
        },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(conv_backward_params(e)); },
    // the same multiply-adds as the forward pass (each output tap once)
    .flops = [](const PlanEntry& e, Precision) { return 2.0 * conv_pixels(e) * e.OC * conv_taps(e); },
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return (conv_pixels(e) * e.OC + e.OC * conv_taps(e)) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(e.B) * e.H * e.W * e.C * e_of(p); },
    // operands: dout, weight
    .gemm = {.operands = {1, 2},
             .vec4_ok = vec4_c_oc,
             .largest_operand = conv_largest,
             .texel_lanes_along_m = true}};

}  // namespace kernels
#endif
