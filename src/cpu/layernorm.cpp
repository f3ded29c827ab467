// LayerNorm on the CPU (cpu/layernorm.hpp).
#include "cpu/layernorm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cpu {
namespace {

constexpr long kRowBlock = 256;   // rows per partial sum of dg and db: fixed by the shape, never the thread count

}  // namespace

void layer_norm_forward(long rows, int C, float eps, const float* x, const float* g, const float* b, float* out,
                        float* mean, float* rstd, ThreadPool& pool) {
  pool.parallel_for(size_t(rows), 16, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const float* row = x + r * size_t(C);
      float m = 0, var = 0;  // two passes: the variance of the centred values (no cancellation)
      for (int c = 0; c < C; ++c) m += row[c];
      m /= float(C);
      for (int c = 0; c < C; ++c) var += (row[c] - m) * (row[c] - m);
      const float s = 1.0f / std::sqrt(var / float(C) + eps);
      mean[r] = m;
      rstd[r] = s;
      float* o = out + r * size_t(C);
      for (int c = 0; c < C; ++c) o[c] = (row[c] - m) * s * g[c] + b[c];
    }
  });
}

void layer_norm_backward_data(long rows, int C, const float* x, const float* g, const float* mean, const float* rstd,
                              const float* dout, float* dx, bool accumulate, ThreadPool& pool) {
  pool.parallel_for(size_t(rows), 16, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * size_t(C);
      const float* d = dout + r * size_t(C);
      const float m = mean[r], s = rstd[r];
      float mean_d = 0, mean_dx = 0;
      for (int c = 0; c < C; ++c) {
        const float dxhat = d[c] * g[c];
        mean_d += dxhat;
        mean_dx += dxhat * (xr[c] - m) * s;
      }
      mean_d /= float(C);
      mean_dx /= float(C);
      float* o = dx + r * size_t(C);
      for (int c = 0; c < C; ++c) {
        const float v = s * (d[c] * g[c] - mean_d - (xr[c] - m) * s * mean_dx);
        o[c] = accumulate ? o[c] + v : v;
      }
    }
  });
}

void layer_norm_backward_params(long rows, int C, const float* x, const float* mean, const float* rstd,
                                const float* dout, float* dg, float* db, ThreadPool& pool) {
  // Each block of rows summed into its own partials (rows read in order, contiguous over the features), then the
  // blocks in order: the same sums on any number of threads.
  const long blocks = (rows + kRowBlock - 1) / kRowBlock;
  std::vector<float> partial_g(size_t(blocks) * size_t(C)), partial_b(size_t(blocks) * size_t(C));
  pool.parallel_for(size_t(blocks), 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      float* pg = &partial_g[i * size_t(C)];
      float* pb = &partial_b[i * size_t(C)];
      std::fill_n(pg, C, 0.0f);
      std::fill_n(pb, C, 0.0f);
      for (long r = long(i) * kRowBlock; r < std::min(rows, long(i + 1) * kRowBlock); ++r) {
        const float* xr = x + size_t(r) * size_t(C);
        const float* d = dout + size_t(r) * size_t(C);
        for (int c = 0; c < C; ++c) {
          pg[c] += d[c] * (xr[c] - mean[r]) * rstd[r];
          pb[c] += d[c];
        }
      }
    }
  });
  for (int c = 0; c < C; ++c) {
    float sg = 0, sb = 0;
    for (long i = 0; i < blocks; ++i) {
      sg += partial_g[size_t(i) * size_t(C) + size_t(c)];
      sb += partial_b[size_t(i) * size_t(C) + size_t(c)];
    }
    dg[c] = sg;
    db[c] = sb;
  }
}

}  // namespace cpu
