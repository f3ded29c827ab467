// max_pool_backward: the gradient of 2x2 max pooling with stride 2, NHWC, computed per input element (no scatter, no
// stored indices): the window's maximum is found again from inp.
//   dinp (B,H,W,C) [b,y,x,c] = dout (B,OH,OW,C) [b, y/2, x/2, c] where (y, x) is its window's first maximum (in the
//   order (0,0), (0,1), (1,0), (1,1)), else 0; 0 in a dropped odd last row or column. Every element is written.
// A gradient is a copy of one dout value or 0: exact in every precision.
#include "cpu/ops/op.hpp"

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
  pool.parallel_for(size_t(p.B) * H, grain_for(double(W * C * 2)), [=](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {  // r = b * H + y: one row of input pixels
      const size_t n = r / H, y = r % H;
      float* d = dinp + r * W * C;
      std::fill(d, d + W * C, 0.0f);
      if (y / 2 >= OH) continue;
      for (size_t x = 0; x < 2 * OW; x += 2) {
        const float* i00 = inp + ((n * H + (y & ~size_t{1})) * W + x) * C;
        const float* i10 = i00 + W * C;
        const float* g = dout + ((n * OH + y / 2) * OW + x / 2) * C;
        const int row = int(y & 1);
        for (size_t c = 0; c < C; ++c) {
          const int at = first_max(i00[c], i00[C + c], i10[c], i10[C + c]);
          if (at / 2 == row) d[(x + size_t(at % 2)) * C + c] = g[c];
        }
      }
    }
  });
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

const Kernel max_pool_backward{
    .def = {
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
                      .elements = [](const PlanEntry& e, const StepArgs&) -> size_t {
                        return static_cast<size_t>(e.B * e.OH() * e.OW() * e.C);
                      }},
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
              return KernelArgs::of(
                  core::MaxPoolParams{u32(e.B), u32(e.H), u32(e.W), u32(e.C), u32(e.OH()), u32(e.OW())});
            },
        // the window's 3 comparisons, once per output
        .flops = [](const PlanEntry& e, Precision) { return 3.0 * double(e.B * e.OH() * e.OW() * e.C); },
        .bytes_read = [](const PlanEntry& e,
                         Precision p) { return double(e.B * e.H * e.W * e.C + e.B * e.OH() * e.OW() * e.C) * e_of(p); },
        .bytes_written = [](const PlanEntry& e, Precision p) { return double(e.B * e.H * e.W * e.C) * e_of(p); }},
    .tuned = tuned,
    .reference = reference};

}  // namespace cpu::ops
