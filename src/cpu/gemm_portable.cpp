// The portable GEMMs (see gemm_portable.hpp): out (I,J) = A (I,K) · Bm (K,J) as rank-1 updates along the contiguous
// rows of Bm: per k, 2 vectors of Bm stay in registers and each of the kNnRows values of A is broadcast against them.
#include "cpu/gemm_portable.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/fast_math.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/exact_fma.hpp"

namespace cpu {
namespace {

constexpr int kNnRows = 5, kNnCols = 16;  // 10 accumulators + 2 Bm vectors + 1 broadcast: 7 loads per 10 fmas

// One tile: rows [0, ri) (ri <= kNnRows) x kNnCols columns, storing columns [0, nj). A tile with fewer rows repeats its
// last row instead of having its own instance: gcc vectorizes the 5-row loop nest reliably, not the smaller ones.
// kOutT stores the tile transposed: out[j*ldo + i]. noinline: compiled on its own, the register allocation of the
// loop does not depend on the caller (inlined into the forward pass, gcc spilled and ran 35% slower).
// With accumulate, the tile continues the sums already in out (a later block of K; the chain of fmas per output is
// the same as in one pass, the float stored in between is exact).
template <bool kOutT>
[[gnu::noinline]] void nn_tile(float* out, long ldo, int ri, int nj, const float* a, long a_is, long a_ks,
                               const float* bm, long ldb, long K, bool accumulate = false) {
  constexpr int NJ = kNnCols;
  long row[kNnRows];
  for (int i = 0; i < kNnRows; ++i) row[i] = std::min(i, ri - 1) * a_is;
  float acc[kNnRows][NJ] = {};
  if (accumulate)
    for (int i = 0; i < ri; ++i)
      for (int j = 0; j < nj; ++j) acc[i][j] = kOutT ? out[j * ldo + i] : out[i * ldo + j];
  for (long k = 0; k < K; ++k) {
    const float* brow = bm + k * ldb;
#pragma GCC unroll 8
    for (int i = 0; i < kNnRows; ++i) {
      const float av = a[row[i] + k * a_ks];
      for (int j = 0; j < NJ; ++j) acc[i][j] = cpu::fma(av, brow[j], acc[i][j]);
    }
  }
  for (int i = 0; i < ri; ++i)
    for (int j = 0; j < nj; ++j) (kOutT ? out[j * ldo + i] : out[i * ldo + j]) = acc[i][j];
}

// Tiles are numbered column strip by column strip; a chunk of consecutive tiles copies its strip of Bm (K x kNnCols,
// zero-padded past J) once into a contiguous buffer, and walks down its rows block of kKBlock rows of the strip by
// block, so that the block (16 KB) stays in L1. (Read in place, a strip with a power-of-two row stride such as C = 256
// maps onto a handful of cache sets and is evicted: 25% slower; without the blocks, K = batch 1024 ran 30% slower.)
constexpr long kKBlock = 256;

}  // namespace

void portable_gemm(float* out, const float* a, long a_is, long a_ks, const float* bm, long I, long J, long K,
                   ThreadPool& pool) {
  const long row_tiles = (I + kNnRows - 1) / kNnRows;
  const long strips = (J + kNnCols - 1) / kNnCols;
  const size_t grain = grain_for(2.0 * kNnRows * kNnCols * static_cast<double>(K));
  pool.parallel_for(static_cast<size_t>(row_tiles * strips), grain, [&](size_t t0, size_t t1) {
    thread_local std::vector<float>* packed_slot = nullptr;
    std::vector<float>& packed = per_thread(packed_slot);  // (K, kNnCols), one per thread
    packed.resize(std::max(packed.size(), static_cast<size_t>(K * kNnCols)));
    for (long t = static_cast<long>(t0); t < static_cast<long>(t1);) {
      const long strip = t / row_tiles, end = std::min(static_cast<long>(t1), (strip + 1) * row_tiles);
      const long j0 = strip * kNnCols, width = std::min<long>(kNnCols, J - j0);
      float* dst = packed.data();
      if (width < kNnCols) std::fill(dst, dst + K * kNnCols, 0.0f);
      for (long k = 0; k < K; ++k) std::copy_n(bm + k * J + j0, width, dst + k * kNnCols);
      for (long k0 = 0; k0 < K; k0 += kKBlock)
        for (long tile = t; tile < end; ++tile) {
          const long i0 = (tile % row_tiles) * kNnRows;
          nn_tile<false>(out + i0 * J + j0, J, static_cast<int>(std::min<long>(kNnRows, I - i0)),
                         static_cast<int>(width), a + i0 * a_is + k0 * a_ks, a_is, a_ks, dst + k0 * kNnCols, kNnCols,
                         std::min(kKBlock, K - k0), k0 > 0);
        }
      t = end;
    }
  });
}

void portable_gemm_forward(float* sums, const float* inp, const float* weight, long B, long C, long OC, ThreadPool& pool,
                           const PortableEpilogue& epilogue) {
  // sumsᵀ (OC,B) = weight (OC,C) · inpᵀ (C,B): weight is the broadcast operand (its rows are contiguous in C) and a
  // strip of kNnCols batch rows, packed transposed into (C, kNnCols), is the vector operand. Tiles are stored
  // transposed into sums.
  const long strips = (B + kNnCols - 1) / kNnCols;
  // With few strips, OC is split into groups too so that every thread gets work; a group keeps >= 40 outputs so that
  // packing its strip (16 x C copies) stays small next to its 2 x 16 x C x 40 flops.
  const long want_tasks = 4L * pool.size();
  const long groups = std::clamp((want_tasks + strips - 1) / strips, 1L, std::max(1L, OC / 40));
  const long group_rows = ((OC + groups - 1) / groups + kNnRows - 1) / kNnRows * kNnRows;
  const long n_groups = (OC + group_rows - 1) / group_rows;
  const size_t grain = grain_for(2.0 * kNnCols * static_cast<double>(group_rows) * static_cast<double>(C));
  pool.parallel_for(static_cast<size_t>(strips * n_groups), grain, [&](size_t t0, size_t t1) {
    thread_local std::vector<float>* packed_slot = nullptr;
    std::vector<float>& packed = per_thread(packed_slot);  // (C, kNnCols), one per thread
    packed.resize(std::max(packed.size(), static_cast<size_t>(C * kNnCols)));
    long packed_strip = -1;
    for (size_t t = t0; t < t1; ++t) {
      const long strip = static_cast<long>(t) / n_groups, group = static_cast<long>(t) % n_groups;
      const long b0 = strip * kNnCols, width = std::min<long>(kNnCols, B - b0);
      if (strip != packed_strip) {
        float* dst = packed.data();
        if (width < kNnCols) std::fill(dst, dst + C * kNnCols, 0.0f);  // the tile computes all 16 columns
        for (long c0 = 0; c0 < C; c0 += 64) {  // 64 columns at a time: the written lines stay in L1
          const long c1 = std::min(C, c0 + 64);
          for (long j = 0; j < width; ++j) {
            const float* src = inp + (b0 + j) * C;
            for (long c = c0; c < c1; ++c) dst[c * kNnCols + j] = src[c];
          }
        }
        packed_strip = strip;
      }
      const long o0 = group * group_rows, o1 = std::min(OC, o0 + group_rows);
      for (long i0 = o0; i0 < o1; i0 += kNnRows) {
        const int ri = static_cast<int>(std::min<long>(kNnRows, o1 - i0));
        nn_tile<true>(sums + b0 * OC + i0, OC, ri, static_cast<int>(width), weight + i0 * C, C, 1, packed.data(),
                      kNnCols, C);
      }
      epilogue(b0, width, o0, o1);
    }
  });
}

}  // namespace cpu
