// The CPU convolutions as GEMMs over im2col panels (Chellapilla et al., "High Performance Convolutional Neural
// Networks for Document Processing", 2006), at the portable level, where no SIMD micro-kernel runs (conv.hpp): each
// block of output pixels gathers its input patches into a panel in the calling thread's cache and multiplies it with
// the portable GEMM (or gemm() with the active micro-kernel, if called at a SIMD level).
#include "cpu/conv_im2col.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/gemm.hpp"
#include "cpu/gemm_portable.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {
namespace {

// Pixel rows per panel: the forward and backward-data panels are recomputed per block, so any size gives the same
// bits; backward weight sums one partial product per block, so its block is fixed (never the thread count).
constexpr long kBlockRows = 256;
constexpr long kWeightBlockRows = 512;

// Rows [m0, m1) of a panel over image x (., XH, XW, XC): row m is pixel (b, y, x) of a YH x YW grid, its columns
// (ky, kx, c) hold x[b, y + dy, x + dx, c] with dy = ky - pad, dx = kx - pad (flip: pad - ky, pad - kx), 0 outside.
void im2col(float* col, const float* x, long XH, long XW, long XC, long YH, long YW, long KS, long pad, bool flip,
            long m0, long m1) {
  const long K = KS * KS * XC;
  for (long m = m0; m < m1; ++m) {
    const long ox = m % YW, oy = (m / YW) % YH, b = m / (YW * YH);
    float* row = col + (m - m0) * K;
    for (long ky = 0; ky < KS; ++ky) {
      const long iy = oy + (flip ? pad - ky : ky - pad);
      for (long kx = 0; kx < KS; ++kx) {
        const long ix = ox + (flip ? pad - kx : kx - pad);
        float* dst = row + (ky * KS + kx) * XC;
        if (iy < 0 || iy >= XH || ix < 0 || ix >= XW) {
          std::fill(dst, dst + XC, 0.0f);
        } else {
          std::memcpy(dst, x + ((b * XH + iy) * XW + ix) * XC, sizeof(float) * size_t(XC));
        }
      }
    }
  }
}

// The calling thread's panel, grown as needed, and a one-thread pool for the GEMM on it (the outer parallel_for
// already spreads the blocks over the threads).
float* panel(size_t floats) {
  thread_local std::vector<float>* buffer_slot = nullptr;
  std::vector<float>& buffer = per_thread(buffer_slot);
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}
ThreadPool& serial_pool() {
  thread_local ThreadPool* pool_slot = nullptr;
  return per_thread(pool_slot, 1);
}

// out (rows, N) = col (rows, K) · b, b given as (N, K) rows (transposed: forward) or (K, N) rows (backward data).
void panel_gemm(float* out, const float* col, const float* b, long rows, long N, long K, bool b_transposed) {
  ThreadPool& one = serial_pool();
  if (active_micro_kernel() != nullptr) {
    if (b_transposed)
      gemm(out, N, {col, K, 1}, {b, 1, K}, rows, N, K, one);
    else
      gemm(out, N, {col, K, 1}, {b, N, 1}, rows, N, K, one);
    return;
  }
  if (b_transposed)
    portable_gemm_forward(out, col, b, rows, K, N, one, [](long, long, long, long) {});
  else
    portable_gemm(out, col, K, 1, b, rows, N, K, one);
}

size_t blocks_of(long rows, long block) { return static_cast<size_t>((rows + block - 1) / block); }

}  // namespace


void conv_forward_im2col(float* sums, const float* inp, const float* weight, const ConvShape& s, ThreadPool& pool,
                       const ConvEpilogue& epilogue) {
  const long M = s.B * s.OH * s.OW, K = s.K();
  pool.parallel_for(blocks_of(M, kBlockRows), 1, [&](size_t i0, size_t i1) {
    float* col = panel(size_t(kBlockRows * K));
    for (size_t i = i0; i < i1; ++i) {
      const long m0 = long(i) * kBlockRows, m1 = std::min(M, m0 + kBlockRows);
      im2col(col, inp, s.H, s.W, s.C, s.OH, s.OW, s.KS, s.pad, false, m0, m1);
      panel_gemm(sums + m0 * s.OC, col, weight, m1 - m0, s.OC, K, true);
      if (epilogue) epilogue(m0, m1);
    }
  });
}

void conv_backward_data_im2col(float* dinp, const float* dout, const float* weight, const ConvShape& s,
                             ThreadPool& pool) {
  const long K = s.KS * s.KS * s.OC;
  const std::vector<float> wt = flipped_weight(weight, s);
  const long M = s.B * s.H * s.W;
  pool.parallel_for(blocks_of(M, kBlockRows), 1, [&](size_t i0, size_t i1) {
    float* col = panel(size_t(kBlockRows * K));
    for (size_t i = i0; i < i1; ++i) {
      const long m0 = long(i) * kBlockRows, m1 = std::min(M, m0 + kBlockRows);
      im2col(col, dout, s.OH, s.OW, s.OC, s.H, s.W, s.KS, s.pad, true, m0, m1);
      panel_gemm(dinp + m0 * s.C, col, wt.data(), m1 - m0, s.C, K, false);
    }
  });
}

void conv_backward_weight_im2col(float* dweight, const float* dout, const float* inp, const ConvShape& s,
                               ThreadPool& pool) {
  const long M = s.B * s.OH * s.OW, K = s.K(), n = s.OC * K;
  const size_t blocks = blocks_of(M, kWeightBlockRows);
  std::vector<float> partials(blocks * size_t(n));
  pool.parallel_for(blocks, 1, [&](size_t i0, size_t i1) {
    float* col = panel(size_t(kWeightBlockRows * K));
    for (size_t i = i0; i < i1; ++i) {
      const long m0 = long(i) * kWeightBlockRows, m1 = std::min(M, m0 + kWeightBlockRows);
      im2col(col, inp, s.H, s.W, s.C, s.OH, s.OW, s.KS, s.pad, false, m0, m1);
      float* part = partials.data() + i * size_t(n);
      const float* d = dout + m0 * s.OC;  // A (OC, rows): A(o, r) = d[r * OC + o]
      if (active_micro_kernel() != nullptr)
        gemm(part, K, {d, 1, s.OC}, {col, K, 1}, s.OC, K, m1 - m0, serial_pool());
      else
        portable_gemm(part, d, 1, s.OC, col, s.OC, K, m1 - m0, serial_pool());
    }
  });
  // The blocks' partial products summed in block order (the same order on any number of threads).
  pool.parallel_for(size_t(n), 4096, [&](size_t j0, size_t j1) {
    for (size_t j = j0; j < j1; ++j) {
      float sum = 0;
      for (size_t i = 0; i < blocks; ++i) sum += partials[i * size_t(n) + j];
      dweight[j] = sum;
    }
  });
}

}  // namespace cpu
