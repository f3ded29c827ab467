// The CPU convolutions of cpu/conv.hpp at every SIMD level this CPU runs (the indirect convolution with the AVX2 and
// AVX-512 micro-kernels, the im2col GEMMs at the portable level) against plain loops in double: forward, backward data
// and backward weight, and the same bits on 1 and 3 threads. The kernel parity test covers the active level only, and
// through the kernel table; this test reaches the paths the shape picks at each level: edge tiles (pixels and
// channels no multiple of a tile), zero padding of 0 to 2 pixels, kernels of 1, 3 and 5, one input channel (backward
// weight's transposed form where OC is a multiple of the tile's width), and several partial products of backward
// weight (more than 1024 pixels).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cpu/conv.hpp"
#include "cpu/simd.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu_test_util.hpp"

namespace {

using test::LevelGuard;
using test::random_floats;
using test::runnable_levels;

// {B, H, W, C, OC, KS, pad}: OH = H + 2 pad - KS + 1.
cpu::ConvShape shape(long B, long H, long W, long C, long OC, long KS, long pad) {
  return {B, H, W, C, OC, H + 2 * pad - KS + 1, W + 2 * pad - KS + 1, KS, pad};
}
const cpu::ConvShape kShapes[] = {
    shape(1, 5, 5, 1, 3, 3, 1),    shape(2, 7, 6, 3, 5, 3, 1),   shape(3, 6, 7, 4, 8, 3, 0),
    shape(1, 6, 5, 2, 3, 5, 2),    shape(2, 4, 3, 5, 6, 1, 0),   shape(2, 9, 9, 16, 32, 3, 1),
    shape(4, 19, 17, 1, 32, 3, 1), shape(3, 20, 19, 3, 7, 3, 1), shape(2, 14, 13, 33, 17, 3, 1),
    shape(5, 16, 15, 1, 64, 3, 1)};

std::string label(const cpu::ConvShape& s) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) +
         " C=" + std::to_string(s.C) + " OC=" + std::to_string(s.OC) + " KS=" + std::to_string(s.KS) +
         " pad=" + std::to_string(s.pad);
}

// The three products in double, with the sum of the terms' magnitudes (the scale of the rounding error) beside each.
struct Reference {
  std::vector<double> out, out_scale, dinp, dinp_scale, dweight, dweight_scale;
};
Reference reference(const cpu::ConvShape& s, const std::vector<float>& inp, const std::vector<float>& w,
                    const std::vector<float>& dout) {
  Reference r;
  r.out.assign(size_t(s.B * s.OH * s.OW * s.OC), 0.0);
  r.out_scale = r.out;
  r.dinp.assign(inp.size(), 0.0);
  r.dinp_scale = r.dinp;
  r.dweight.assign(w.size(), 0.0);
  r.dweight_scale = r.dweight;
  for (long b = 0; b < s.B; ++b)
    for (long y = 0; y < s.OH; ++y)
      for (long x = 0; x < s.OW; ++x)
        for (long o = 0; o < s.OC; ++o) {
          const size_t oi = size_t(((b * s.OH + y) * s.OW + x) * s.OC + o);
          for (long ky = 0; ky < s.KS; ++ky)
            for (long kx = 0; kx < s.KS; ++kx) {
              const long iy = y + ky - s.pad, ix = x + kx - s.pad;
              if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) continue;
              for (long c = 0; c < s.C; ++c) {
                const size_t ii = size_t(((b * s.H + iy) * s.W + ix) * s.C + c);
                const size_t wi = size_t(((o * s.KS + ky) * s.KS + kx) * s.C + c);
                r.out[oi] += double(inp[ii]) * w[wi];
                r.out_scale[oi] += std::fabs(double(inp[ii]) * w[wi]);
                r.dinp[ii] += double(dout[oi]) * w[wi];
                r.dinp_scale[ii] += std::fabs(double(dout[oi]) * w[wi]);
                r.dweight[wi] += double(dout[oi]) * inp[ii];
                r.dweight_scale[wi] += std::fabs(double(dout[oi]) * inp[ii]);
              }
            }
        }
  return r;
}

// Every value within fp32 rounding of the reference: |got - want| <= 1e-5 * (sum of |terms|) + 1e-6.
void check_close(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale,
                 const std::string& what) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= 1e-5 * scale[i] + 1e-6) && bad++ == 0) first = i;
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " values off, the first at " << first
                                << ": " << (bad ? got[first] : 0.0f) << " instead of " << (bad ? want[first] : 0.0));
}

}  // namespace

TEST_CASE("the CPU convolutions equal plain loops at every SIMD level, the same bits on 1 and 3 threads") {
  LevelGuard guard;
  cpu::ThreadPool one(1), three(3);
  uint64_t seed = 1;
  for (const cpu::ConvShape& s : kShapes) {
    const auto inp = random_floats(size_t(s.B * s.H * s.W * s.C), seed++);
    const auto w = random_floats(size_t(s.OC * s.K()), seed++);
    const auto dout = random_floats(size_t(s.B * s.OH * s.OW * s.OC), seed++);
    const Reference want = reference(s, inp, w, dout);
    for (const cpu::SimdLevel level : runnable_levels()) {
      cpu::set_simd_level(level);
      const std::string what = label(s) + " at " + cpu::to_string(level);
      std::vector<float> out(want.out.size()), dinp(inp.size()), dweight(w.size());
      cpu::conv_forward_gemm(out.data(), inp.data(), w.data(), s, three, {});
      cpu::conv_backward_data_gemm(dinp.data(), dout.data(), w.data(), s, three);
      cpu::conv_backward_weight_gemm(dweight.data(), dout.data(), inp.data(), s, three);
      check_close(out, want.out, want.out_scale, "forward " + what);
      check_close(dinp, want.dinp, want.dinp_scale, "backward data " + what);
      check_close(dweight, want.dweight, want.dweight_scale, "backward weight " + what);
      std::vector<float> out1(out.size()), dinp1(dinp.size()), dweight1(dweight.size());
      cpu::conv_forward_gemm(out1.data(), inp.data(), w.data(), s, one, {});
      cpu::conv_backward_data_gemm(dinp1.data(), dout.data(), w.data(), s, one);
      cpu::conv_backward_weight_gemm(dweight1.data(), dout.data(), inp.data(), s, one);
      CHECK_MESSAGE(out1 == out, "forward " << what << ": other bits on 1 thread than on 3");
      CHECK_MESSAGE(dinp1 == dinp, "backward data " << what << ": other bits on 1 thread than on 3");
      CHECK_MESSAGE(dweight1 == dweight, "backward weight " << what << ": other bits on 1 thread than on 3");
    }
  }
}
