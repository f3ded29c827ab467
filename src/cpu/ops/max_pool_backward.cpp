// max_pool_backward: the gradient of 2x2 max pooling with stride 2, NHWC, computed per input element (no scatter, no
// stored indices): the window's maximum is found again from inp.
//   dinp (B,H,W,C) [b,y,x,c] = dout (B,OH,OW,C) [b, y/2, x/2, c] where (y, x) is its window's first maximum (in the
//   order (0,0), (0,1), (1,0), (1,1)), else 0; 0 in a dropped odd last row or column. Every element is written.
// A gradient is a copy of one dout value or 0: exact in every precision.
#include <bit>

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

// One window's four input gradients over the C channels: o_k[c] = g[c] where input k holds the window's first maximum
// (first_max's choice, made without branches: v1 wins over v0 if greater, v2 over both if greater than their max...),
// else 0. Separate arrays (restrict) and bitwise logic on all-ones masks and g's bits, so that the compiler vectorizes
// the loop over the channels for baseline x86-64 too: bool selects (w ? d : 0.0f) stayed a scalar loop with branches
// there ("control flow in loop"), 3x the AVX-512 build's time in a portable build. The same bits: g[c] or +0.
void window_gradients(float* __restrict o0, float* __restrict o1, float* __restrict o2, float* __restrict o3,
                      const float* __restrict a0, const float* __restrict a1, const float* __restrict a2,
                      const float* __restrict a3, const float* __restrict g, size_t C) {
  for (size_t c = 0; c < C; ++c) {
    const float v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];
    const uint32_t d = std::bit_cast<uint32_t>(g[c]);
    const float m01 = v1 > v0 ? v1 : v0, m012 = v2 > m01 ? v2 : m01;
    const uint32_t w3 = -uint32_t(v3 > m012), g2 = -uint32_t(v2 > m01), g1 = -uint32_t(v1 > v0);
    const uint32_t w2 = ~w3 & g2, w1 = ~w3 & ~g2 & g1, w0 = ~w3 & ~g2 & ~g1;  // first_max's order
    o0[c] = std::bit_cast<float>(d & w0);
    o1[c] = std::bit_cast<float>(d & w1);
    o2[c] = std::bit_cast<float>(d & w2);
    o3[c] = std::bit_cast<float>(d & w3);
  }
}

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::MaxPoolParams>();
  float* dinp = b.f32(0);
  const float* dout = b.f32(1);
  const float* inp = b.f32(2);
  const size_t H = p.H, W = p.W, C = p.C, OH = p.OH, OW = p.OW;
  // One task per row of windows (b, y): both input rows 2y and 2y+1 written whole, each window's four gradients by
  // branch-free selects over the channels (vectorized): the first maximum takes dout, the others 0.
  pool.parallel_for(size_t(p.B) * OH, grain_for(double(OW * C * 8)), [=](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const size_t n = r / OH, y = r % OH;
      const float* i0 = inp + (n * H + 2 * y) * W * C;
      const float* i1 = i0 + W * C;
      float* d0 = dinp + (n * H + 2 * y) * W * C;
      float* d1 = d0 + W * C;
      const float* g = dout + r * OW * C;
      for (size_t x = 0; x < OW; ++x) {
        const float *a0 = i0 + 2 * x * C, *a1 = a0 + C, *a2 = i1 + 2 * x * C, *a3 = a2 + C;
        float *o0 = d0 + 2 * x * C, *o1 = o0 + C, *o2 = d1 + 2 * x * C, *o3 = o2 + C;
        const float* gx = g + x * C;
        window_gradients(o0, o1, o2, o3, a0, a1, a2, a3, gx, C);
      }
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
