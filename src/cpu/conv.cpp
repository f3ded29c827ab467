// The CPU convolutions at the SIMD levels: indirect convolutions on the packed GEMM's micro-kernels (see conv.hpp).
#include "cpu/conv.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/gemm.hpp"
#include "cpu/conv_im2col.hpp"
#include "cpu/gemm_micro.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {

namespace {
template <typename Params>
ConvShape shape_of(const Params& p) {
  auto l = [](core::uint v) { return static_cast<long>(v); };  // long is 32 bits on Windows: no narrowing in braces
  return {l(p.B), l(p.H), l(p.W), l(p.C), l(p.OC), l(p.OH), l(p.OW), l(p.KS), l(p.pad)};
}
}  // namespace

ConvShape conv_shape(const core::Conv2dForwardParams& p) { return shape_of(p); }
ConvShape conv_shape(const core::Conv2dBackwardParams& p) { return shape_of(p); }

std::vector<float> flipped_weight(const float* weight, const ConvShape& s) {
  const long KK = s.KS * s.KS;
  std::vector<float> wt(size_t(KK * s.OC * s.C));
  for (long oc = 0; oc < s.OC; ++oc)
    for (long k = 0; k < KK; ++k)
      std::memcpy(&wt[size_t((k * s.OC + oc) * s.C)], weight + (oc * KK + k) * s.C, sizeof(float) * size_t(s.C));
  return wt;
}

namespace {

size_t blocks_of(long rows, long block) { return static_cast<size_t>((rows + block - 1) / block); }

// The pixel grid of a convolution's GEMM rows and the image its patches read: row m is pixel (b, y, x) of a YH x YW
// grid, and its columns (ky, kx, c) read x[b, y + dy, x + dx, c], dy = ky - pad, dx = kx - pad (flip: pad - ky,
// pad - kx), zero outside the XH x XW image of XC channels.
struct PatchGrid {
  const float* x;
  long XH, XW, XC, YH, YW, KS, pad;
  bool flip;
  long taps() const { return KS * KS; }
};

// The row pointers of the tiles of rows [m0, m1) for run_indirect: tile t's at ptrs + t * taps * mr, ptrs[t * taps * mr
// + k * mr + i] = the XC values tap k of row m0 + t * mr + i reads (zeros where the patch overhangs the image, and for
// rows past m1, whose outputs are never stored). The pixel is stepped along, not divided out of m for every row.
void tile_pointers(const float** ptrs, const PatchGrid& g, long m0, long m1, long mr, const float* zeros) {
  const long taps = g.taps(), tiles = (m1 - m0 + mr - 1) / mr;
  // Tap k's offset from the pixel's own position, and the range of dy and dx: a pixel whose whole patch lies in the
  // image (most of them) takes its pointers as position + offset, without a bounds check per tap.
  thread_local std::vector<long>* offset_slot = nullptr;
  std::vector<long>& offset = per_thread(offset_slot);
  offset.resize(size_t(taps));
  const auto shift = [&g](long k) { return g.flip ? g.pad - k : k - g.pad; };
  for (long ky = 0; ky < g.KS; ++ky)
    for (long kx = 0; kx < g.KS; ++kx) offset[size_t(ky * g.KS + kx)] = (shift(ky) * g.XW + shift(kx)) * g.XC;
  const long lo = std::min(shift(0), shift(g.KS - 1)), hi = std::max(shift(0), shift(g.KS - 1));
  long x = m0 % g.YW, y = (m0 / g.YW) % g.YH, b = m0 / (g.YW * g.YH);
  for (long t = 0; t < tiles; ++t) {
    const float** tile = ptrs + t * taps * mr;
    for (long i = 0; i < mr; ++i) {
      if (m0 + t * mr + i >= m1) {
        for (long k = 0; k < taps; ++k) tile[k * mr + i] = zeros;
        continue;
      }
      if (y + lo >= 0 && y + hi < g.XH && x + lo >= 0 && x + hi < g.XW) {  // the whole patch inside the image
        const float* at = g.x + ((b * g.XH + y) * g.XW + x) * g.XC;
        for (long k = 0; k < taps; ++k) tile[k * mr + i] = at + offset[size_t(k)];
      } else {
        for (long ky = 0; ky < g.KS; ++ky) {
          const long iy = y + shift(ky);
          for (long kx = 0; kx < g.KS; ++kx) {
            const long ix = x + shift(kx);
            const bool inside = iy >= 0 && iy < g.XH && ix >= 0 && ix < g.XW;
            tile[(ky * g.KS + kx) * mr + i] = inside ? g.x + ((b * g.XH + iy) * g.XW + ix) * g.XC : zeros;
          }
        }
      }
      if (++x == g.YW && (x = 0, ++y == g.YH)) y = 0, ++b;  // the next pixel
    }
  }
}

// A row of n zeros owned by the calling thread.
const float* zero_row(long n) {
  thread_local std::vector<float>* zeros_slot = nullptr;
  std::vector<float>& zeros = per_thread(zeros_slot);
  if (zeros.size() < size_t(n)) zeros.assign(size_t(n), 0.0f);
  return zeros.data();
}

// Rows per task of indirect_gemm: a multiple of the tile's rows (the tasks, never the thread count, fix the blocks).
constexpr long kIndirectTiles = 32;

// out (M, N; row stride N) = A (M, taps * XC) · B, A the patches of grid g (M = B * YH * YW rows), B given packed
// (pb: pack_b's micro-panels over K = taps * XC); epilogue per finished block of rows (may be null). Each output is
// one fma chain over k ascending, as an im2col GEMM computes it.
void indirect_gemm(float* out, const PatchGrid& g, long M, const float* pb, long N, const GemmMicroKernel& uk,
                   ThreadPool& pool, const ConvEpilogue& epilogue) {
  const long MR = uk.mr, NR = uk.nr, taps = g.taps(), K = taps * g.XC, block = kIndirectTiles * MR;
  pool.parallel_for(blocks_of(M, block), 1, [&](size_t i0, size_t i1) {
    thread_local std::vector<const float*>* ptrs_slot = nullptr;
    thread_local std::vector<float>* scratch_slot = nullptr;
    std::vector<const float*>& ptrs = per_thread(ptrs_slot);
    std::vector<float>& scratch = per_thread(scratch_slot);
    ptrs.resize(size_t(kIndirectTiles * taps * MR));
    scratch.resize(size_t(MR * NR));
    const float* zeros = zero_row(g.XC);
    for (size_t blk = i0; blk < i1; ++blk) {
      const long m0 = long(blk) * block, m1 = std::min(M, m0 + block), tiles = (m1 - m0 + MR - 1) / MR;
      tile_pointers(ptrs.data(), g, m0, m1, MR, zeros);
      for (long n0 = 0; n0 < N; n0 += NR) {  // one micro-panel of B (in L1) over all the block's tiles
        const long nr = std::min(NR, N - n0);
        const float* bp = pb + (n0 / NR) * K * NR;
        for (long t = 0; t < tiles; ++t) {
          const long r0 = m0 + t * MR, mr = std::min(MR, m1 - r0);
          float* c = out + r0 * N + n0;
          if (mr == MR && nr == NR) {
            uk.run_indirect(taps, g.XC, ptrs.data() + t * taps * MR, bp, c, N);
          } else {  // an edge tile: computed whole in the scratch tile, only its valid part stored
            uk.run_indirect(taps, g.XC, ptrs.data() + t * taps * MR, bp, scratch.data(), NR);
            for (long i = 0; i < mr; ++i) std::copy_n(scratch.data() + i * NR, nr, c + i * N);
          }
        }
      }
      if (epilogue) epilogue(m0, m1);
    }
  });
}

// B (K x N) packed once per call for indirect_gemm, in a buffer owned by the calling thread.
const float* packed_b(MatrixView b, long K, long N, const GemmMicroKernel& uk) {
  thread_local AlignedBuffer* buffer_slot = nullptr;
  AlignedBuffer& buffer = per_thread(buffer_slot);
  float* pb = buffer.get(size_t((N + uk.nr - 1) / uk.nr * uk.nr * K));
  pack_b(pb, b, 0, K, 0, N, uk);  // all ceil(N / nr) micro-panels, zero-padded
  return pb;
}

// Pixels per partial product of backward weight (fixed by the shape: the sum is the same on any number of threads),
// and pixels per packed slice within it (the B micro-panel, kSlice x nr floats, stays in L1).
constexpr long kWeightBlock = 1024;
constexpr long kWeightSlice = 256;

// dst[0, len) = src[0, len), for the short runs of the packing: copies of a size the compiler knows are a few
// vector moves, where std::copy_n of a run-time length calls memmove (which costs more than copying 6 or 16 floats).
template <long N>
void copy_fixed(float* dst, const float* src) {
  std::memcpy(dst, src, N * sizeof(float));  // a constant size: expanded inline by the compiler
}
void copy_run(float* dst, const float* src, long len) {
  switch (len) {
    case 6: return copy_fixed<6>(dst, src);    // AVX2's tile rows
    case 8: return copy_fixed<8>(dst, src);    // AVX-512's tile rows
    case 16: return copy_fixed<16>(dst, src);  // AVX2's tile columns
    case 32: return copy_fixed<32>(dst, src);  // AVX-512's tile columns
    default: std::copy_n(src, len, dst);
  }
}

// The slice's im2col rows [p0, p0 + kc) of grid g (kc x K, K = taps * XC) packed straight into micro-panels of nr of
// the K columns: element (i, k) at pb[(k / nr) * kc * nr + i * nr + k % nr]. That is pack_b's layout of the patches
// and, with mr for nr, pack_a's layout of their transpose. The last panel's columns past K are left as they are: they
// only feed the padding of the partial products, which is never read.
void pack_patches(float* pb, const PatchGrid& g, long p0, long kc, long nr) {
  long x = p0 % g.YW, y = (p0 / g.YW) % g.YH, b = p0 / (g.YW * g.YH);
  for (long i = 0; i < kc; ++i) {
    float* panel = pb + i * nr;  // row i of the current micro-panel, column j
    long j = 0;
    for (long ky = 0; ky < g.KS; ++ky) {
      const long iy = y + ky - g.pad;
      const bool row_inside = iy >= 0 && iy < g.XH;
      for (long kx = 0; kx < g.KS; ++kx) {
        const long ix = x + kx - g.pad, at = ((b * g.XH + iy) * g.XW + ix) * g.XC;
        const bool inside = row_inside && ix >= 0 && ix < g.XW;
        if (g.XC == 1) {  // one input channel (a first layer): one value, no call to memcpy for it
          panel[j] = inside ? g.x[at] : 0.0f;
          if (++j == nr) j = 0, panel += kc * nr;
          continue;
        }
        for (long c = 0; c < g.XC;) {  // the tap's run of XC values, cut where a micro-panel ends
          const long len = std::min(g.XC - c, nr - j);
          if (inside)
            copy_run(panel + j, g.x + at + c, len);
          else
            std::fill_n(panel + j, len, 0.0f);
          c += len, j += len;
          if (j == nr) j = 0, panel += kc * nr;
        }
      }
    }
    if (++x == g.YW && (x = 0, ++y == g.YH)) y = 0, ++b;  // the next pixel
  }
}

// doutᵀ (OC x kc pixels) packed as pack_a packs A (micro-panels of mr rows, k-major, rows past OC zero): one pixel's
// OC values at a time, a plain loop (pack_a's per-row copies of mr values cost more than the copying itself here).
void pack_dout_t(float* pa, const float* dout, long OC, long kc, long mr) {
  const long whole = OC / mr;  // micro-panels of mr rows of OC; then the last, partial one
  for (long p = 0; p < kc; ++p) {
    const float* d = dout + p * OC;
    for (long r = 0; r < whole; ++r) copy_run(pa + r * kc * mr + p * mr, d + r * mr, mr);
    if (whole * mr < OC) {
      float* dst = pa + whole * kc * mr + p * mr;
      for (long i = 0; i < mr; ++i) dst[i] = whole * mr + i < OC ? d[whole * mr + i] : 0.0f;
    }
  }
}

// The blocks' partial products (each rows x cols, padded to whole tiles) summed in block order into dweight (OC x K):
// the same order on any number of threads. transposed: the partials hold dweightᵀ (K x OC).
void sum_partials(float* dweight, const std::vector<float>& partials, size_t blocks, long cols, const ConvShape& s,
                  bool transposed, ThreadPool& pool) {
  const long K = s.K(), size = long(partials.size() / blocks);
  pool.parallel_for(size_t(s.OC * K), 4096, [&](size_t j0, size_t j1) {
    for (size_t j = j0; j < j1; ++j) {
      const long o = long(j) / K, k = long(j) % K, at = transposed ? k * cols + o : o * cols + k;
      float sum = 0;
      for (size_t i = 0; i < blocks; ++i) sum += partials[i * size_t(size) + size_t(at)];
      dweight[j] = sum;
    }
  });
}

// dweight (OC x K) = doutᵀ (OC x P) · patches (P x K), P = B * OH * OW pixels: per fixed block of pixels a partial
// product, then sum_partials. Two orientations, by shape:
//   - patches narrower than one micro-panel (K <= nr: a first layer's single input channel) and OC a multiple of
//     nr: dweightᵀ = patchesᵀ · dout, dout read in place by the micro-kernel (its rows are contiguous OC values),
//     only the few patch values of each pixel packed;
//   - otherwise doutᵀ packed (mr rows of OC) and the patches packed as micro-panels of nr of the K columns, per slice
//     of kWeightSlice pixels (the B micro-panel in L1), the tile's fma chains continued over the block's slices.
void backward_weight_indirect(float* dweight, const float* dout, const float* inp, const ConvShape& s,
                              const GemmMicroKernel& uk, ThreadPool& pool) {
  const long P = s.B * s.OH * s.OW, K = s.K(), MR = uk.mr, NR = uk.nr;
  const bool transposed = K <= NR && s.OC % NR == 0;
  const long M = transposed ? K : s.OC, N = transposed ? s.OC : K;
  const long rows = (M + MR - 1) / MR * MR, cols = (N + NR - 1) / NR * NR;  // a partial, padded to whole tiles
  const PatchGrid g{inp, s.H, s.W, s.C, s.OH, s.OW, s.KS, s.pad, false};
  const size_t blocks = blocks_of(P, kWeightBlock);
  std::vector<float> partials(blocks * size_t(rows * cols));
  pool.parallel_for(blocks, 1, [&](size_t i0, size_t i1) {
    thread_local AlignedBuffer *a_buf_slot = nullptr, *b_buf_slot = nullptr;
    AlignedBuffer &a_buf = per_thread(a_buf_slot), &b_buf = per_thread(b_buf_slot);
    for (size_t blk = i0; blk < i1; ++blk) {
      float* part = partials.data() + blk * size_t(rows * cols);
      const long b0 = long(blk) * kWeightBlock, b1 = std::min(P, b0 + kWeightBlock);
      if (transposed) {  // the whole block in one call per tile (kc = its pixels), dout in place
        const long kc = b1 - b0;
        float* pa = a_buf.get(size_t(rows * kWeightBlock));
        pack_patches(pa, g, b0, kc, MR);  // patchesᵀ as pack_a's micro-panels: the same layout with mr for nr
        for (long n0 = 0; n0 < cols; n0 += NR)
          for (long m0 = 0; m0 < rows; m0 += MR)
            uk.run_in_place(1, kc, pa + m0 * kc, 1, MR, dout + b0 * s.OC + n0, s.OC, part + m0 * cols + n0, cols);
        continue;
      }
      float* pa = a_buf.get(size_t(rows * kWeightSlice));
      float* pb = b_buf.get(size_t(cols * kWeightSlice));
      for (long p0 = b0; p0 < b1; p0 += kWeightSlice) {  // the block's slices of pixels, in order
        const long kc = std::min(kWeightSlice, b1 - p0);
        pack_dout_t(pa, dout + p0 * s.OC, s.OC, kc, MR);
        pack_patches(pb, g, p0, kc, NR);
        for (long n0 = 0; n0 < cols; n0 += NR)
          for (long m0 = 0; m0 < rows; m0 += MR)
            uk.run(kc, pa + m0 * kc, pb + n0 * kc, part + m0 * cols + n0, cols, p0 > b0);
      }
    }
  });
  sum_partials(dweight, partials, blocks, cols, s, transposed, pool);
}

}  // namespace

void conv_forward_gemm(float* sums, const float* inp, const float* weight, const ConvShape& s, ThreadPool& pool,
                       const ConvEpilogue& epilogue) {
  const GemmMicroKernel* uk = active_micro_kernel();
  if (uk == nullptr) return conv_forward_im2col(sums, inp, weight, s, pool, epilogue);
  // B = weightᵀ (K x OC): B(k, o) = weight[o * K + k]
  const float* pb = packed_b({weight, 1, s.K()}, s.K(), s.OC, *uk);
  const PatchGrid g{inp, s.H, s.W, s.C, s.OH, s.OW, s.KS, s.pad, false};
  indirect_gemm(sums, g, s.B * s.OH * s.OW, pb, s.OC, *uk, pool, epilogue);
}

void conv_backward_data_gemm(float* dinp, const float* dout, const float* weight, const ConvShape& s,
                             ThreadPool& pool) {
  const GemmMicroKernel* uk = active_micro_kernel();
  if (uk == nullptr) return conv_backward_data_im2col(dinp, dout, weight, s, pool);
  const long K = s.KS * s.KS * s.OC;
  const std::vector<float> wt = flipped_weight(weight, s);
  const float* pb = packed_b({wt.data(), s.C, 1}, K, s.C, *uk);
  const PatchGrid g{dout, s.OH, s.OW, s.OC, s.H, s.W, s.KS, s.pad, true};
  indirect_gemm(dinp, g, s.B * s.H * s.W, pb, s.C, *uk, pool, ConvEpilogue{});
}

void conv_backward_weight_gemm(float* dweight, const float* dout, const float* inp, const ConvShape& s,
                               ThreadPool& pool) {
  const GemmMicroKernel* uk = active_micro_kernel();
  if (uk == nullptr) return conv_backward_weight_im2col(dweight, dout, inp, s, pool);
  backward_weight_indirect(dweight, dout, inp, s, *uk, pool);
}

}  // namespace cpu
