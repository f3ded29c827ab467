// max_pool_backward: the gradient of 2x2 max pooling with stride 2, NHWC, computed per input element (no scatter, no
// stored indices): the window's maximum is found again from inp.
//   dinp (B,H,W,C) [b,y,x,c] = dout (B,OH,OW,C) [b, y/2, x/2, c] where (y, x) is its window's first maximum (in the
//   order (0,0), (0,1), (1,0), (1,1)), else 0; 0 in a dropped odd last row or column. Every element is written.
// A gradient is a copy of one dout value or 0: exact in every precision.
#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

// The position (0..3) of the first maximum of a window's four values.
template <typename T>
int first_max(T v0, T v1, T v2, T v3) {
  int at = 0;
  T m = v0;
  if (v1 > m) m = v1, at = 1;
  if (v2 > m) m = v2, at = 2;
  if (v3 > m) at = 3;
  return at;
}

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MaxPoolParams>();
  float* dinp = b.f32(0);
  const float* dout = b.f32(1);
  const float* inp = b.f32(2);
  const size_t H = p.H, W = p.W, C = p.C, OH = p.OH, OW = p.OW;
  // One task per row of windows (b, y): both input rows 2y and 2y+1 written whole, each window's four gradients by
  // branch-free selects over the channels (vectorized): the first maximum takes dout, the others 0.
  const ElementwiseLoops& loops = elementwise_loops();
  pool.parallel_for(size_t(p.B) * OH, grain_for(double(OW * C * 8)), [=, &loops](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const size_t n = r / OH, y = r % OH;
      const float* i0 = inp + (n * H + 2 * y) * W * C;
      const float* i1 = i0 + W * C;
      float* d0 = dinp + (n * H + 2 * y) * W * C;
      float* d1 = d0 + W * C;
      const float* g = dout + r * OW * C;
      loops.max_pool_gradient_row(d0, d1, i0, i1, g, OW, C);  // at the CPU's SIMD level (pool_rows.hpp)
      // A dropped odd last column (W odd): no window, no gradient.
      for (size_t c = 2 * OW * C; c < W * C; ++c) d0[c] = d1[c] = 0.0f;
    }
  });
  // A dropped odd last row (H odd): no window, no gradient.
  if (H % 2 == 1)
    for (size_t n = 0; n < p.B; ++n) std::fill_n(dinp + (n * H + H - 1) * W * C, W * C, 0.0f);
  if (OH == 0)  // images of one row: every row dropped
    std::fill_n(dinp, size_t(p.B) * H * W * C, 0.0f);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::MaxPoolParams>();
  const long H = p.H, W = p.W, C = p.C, OH = p.OH, OW = p.OW;
  std::fill(b[0].begin(), b[0].end(), 0.0);
  for (long n = 0; n < long(p.B); ++n)
    for (long y = 0; y < OH; ++y)
      for (long x = 0; x < OW; ++x)
        for (long c = 0; c < C; ++c) {
          auto in = [&](long dy, long dx) { return b[2][((n * H + 2 * y + dy) * W + 2 * x + dx) * C + c]; };
          const int at = first_max(in(0, 0), in(0, 1), in(1, 0), in(1, 1));
          b[0][((n * H + 2 * y + at / 2) * W + 2 * x + at % 2) * C + c] = b[1][((n * OH + y) * OW + x) * C + c];
        }
}

}  // namespace

const Kernel max_pool_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef max_pool_backward{
    .bindings = {{.name = "dinp",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::DLayerIn,
                  .exact = true,
                  .elements = shape::image_in},
                 {.name = "dout",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DAct,
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
          return std::array<uint64_t, 2>{uint64_t(e.B * e.H * e.W * e.C), 1};
        },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(max_pool_params(e));
        },
    // the window's 3 comparisons, once per output
    .flops = [](const PlanEntry& e, Precision) { return 3.0 * double(e.B * e.OH() * e.OW() * e.C); },
    .bytes_read = [](const PlanEntry& e,
                     Precision p) { return double(e.B * e.H * e.W * e.C + e.B * e.OH() * e.OW() * e.C) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(e.B * e.H * e.W * e.C) * e_of(p); }};

}  // namespace kernels
#endif
