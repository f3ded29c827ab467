// max_pool_forward: 2x2 max pooling with stride 2 (torch.nn.MaxPool2d(2)), NHWC.
//   out (B,OH,OW,C) [b,y,x,c] = max over dy, dx in {0,1} of inp (B,H,W,C) [b, 2y+dy, 2x+dx, c]; OH = H / 2, OW = W / 2
// (an odd last row or column is dropped). A maximum is a copy of one input, so it is exact in every precision.
#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MaxPoolParams>();
  float* out = b.f32(0);
  const float* inp = b.f32(1);
  const size_t H = p.H, W = p.W, C = p.C, OH = p.OH, OW = p.OW;
  const ElementwiseLoops& loops = elementwise_loops();  // the row at the CPU's SIMD level (pool_rows.hpp)
  pool.parallel_for(size_t(p.B) * OH, grain_for(double(OW * C * 4)), [=, &loops](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {  // r = b * OH + y: one row of output pixels
      const size_t n = r / OH, y = r % OH;
      const float* i0 = inp + (n * H + 2 * y) * W * C;
      loops.max_pool_row(out + r * OW * C, i0, i0 + W * C, OW, C);
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::MaxPoolParams>();
  const long H = p.H, W = p.W, C = p.C, OH = p.OH, OW = p.OW;
  for (long n = 0; n < long(p.B); ++n)
    for (long y = 0; y < OH; ++y)
      for (long x = 0; x < OW; ++x)
        for (long c = 0; c < C; ++c) {
          double m = b[1][((n * H + 2 * y) * W + 2 * x) * C + c];
          for (long dy = 0; dy < 2; ++dy)
            for (long dx = 0; dx < 2; ++dx) m = std::max(m, b[1][((n * H + 2 * y + dy) * W + 2 * x + dx) * C + c]);
          b[0][((n * OH + y) * OW + x) * C + c] = m;
        }
}

}  // namespace

const Kernel max_pool_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef max_pool_forward{
    .bindings = {{.name = "out",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::Act,
                  .exact = true,
                  .elements = shape::pool_out},
                 {.name = "inp",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::image_in}},
    .params_bytes = sizeof(core::MaxPoolParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{uint64_t(e.B * e.OH() * e.OW() * e.C), 1};
        },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(max_pool_params(e));
        },
    // 3 comparisons per output
    .flops = [](const PlanEntry& e, Precision) { return 3.0 * double(e.B * e.OH() * e.OW() * e.C); },
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(e.B * e.H * e.W * e.C) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(e.B * e.OH() * e.OW() * e.C) * e_of(p); }};

}  // namespace kernels
#endif
