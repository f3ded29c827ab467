// The packed, blocked CPU GEMM (see gemm.hpp): packing of the operands, the loops around the micro-kernel, and the
// split over threads. Compiled for the baseline instruction set: only the micro-kernels (gemm_avx512.cpp,
// gemm_avx2.cpp, gemm_neon.cpp) use wider instructions.
#include "cpu/gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu/gemm_micro.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/simd.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {

float* AlignedBuffer::get(size_t n) {
  if (storage_.size() < n + 16) storage_.resize(n + 16);
  const auto addr = reinterpret_cast<uintptr_t>(storage_.data());
  return storage_.data() + ((64 - addr % 64) % 64) / sizeof(float);
}

namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }
long round_up(long a, long b) { return ceil_div(a, b) * b; }

// Rows of k per block of pack_rows (below).
constexpr long kPackRowBlock = 16;

// kc rows of `width` contiguous values (row k at src + k * ld) as micro-panels of w values: dst[(j / w) * kc * w +
// k * w + j % w], zero-padded to a multiple of w. This is how an operand contiguous across its micro-panels is packed
// (A of backward weight, B of backward data and weight). It goes kPackRowBlock rows at a time, micro-panel by
// micro-panel within them: the block's rows stay in L1 while each micro-panel gets a contiguous run of writes. (Row
// by row over all micro-panels writes to w-value pieces kc * w floats apart, which alias in the same L1 sets; micro-
// panel by micro-panel over all kc rows re-reads every row, a TLB miss each, once per micro-panel. Measured at 2048:
// backward weight 0.96x of OpenBLAS row by row, 0.98x in blocks; docs/benchmarks.md.)
template <long W>  // W = 0: w at run time
void pack_rows_w(float* dst, const float* src, long ld, long kc, long width, long w_run) {
  const long w = W > 0 ? W : w_run;
  const long whole = width / w * w;
  for (long kb0 = 0; kb0 < kc; kb0 += kPackRowBlock) {
    const long kb1 = std::min(kc, kb0 + kPackRowBlock);
    for (long j0 = 0; j0 < whole; j0 += w)
      for (long k = kb0; k < kb1; ++k) {
        const float* s = src + k * ld + j0;
        float* d = dst + j0 * kc + k * w;
        if constexpr (W > 0) __builtin_memcpy(d, s, W * sizeof(float));  // a constant size: inlined moves
        else std::copy_n(s, w, d);
      }
    for (long k = kb0; whole < width && k < kb1; ++k)  // the last, partial micro-panel
      for (long j = 0; j < w; ++j) dst[whole * kc + k * w + j] = whole + j < width ? src[k * ld + whole + j] : 0.0f;
  }
}

// pack_rows_w with the micro-panel width of the tiles as a constant: each row's piece is then a few inlined vector
// moves instead of a call of memmove for 24-128 bytes (that call was about 4% of a 512 GEMM).
void pack_rows(float* dst, const float* src, long ld, long kc, long width, long w) {
  switch (w) {
    case 6: return pack_rows_w<6>(dst, src, ld, kc, width, w);
    case 8: return pack_rows_w<8>(dst, src, ld, kc, width, w);
    case 12: return pack_rows_w<12>(dst, src, ld, kc, width, w);
    case 16: return pack_rows_w<16>(dst, src, ld, kc, width, w);
    case 32: return pack_rows_w<32>(dst, src, ld, kc, width, w);
    default: return pack_rows_w<0>(dst, src, ld, kc, width, w);
  }
}

}  // namespace

void pack_a(float* dst, MatrixView a, long m0, long rows, long k0, long kc, const GemmMicroKernel& uk) {
  const long mr = uk.mr;
  if (a.rs == 1 && a.cs != 1)  // columns contiguous (backward weight reads dout transposed)
    return pack_rows(dst, a.p + k0 * a.cs + m0, a.cs, kc, rows, mr);
  for (long ir = 0; ir < rows; ir += mr) {
    float* d = dst + (ir / mr) * kc * mr;
    const long n = std::min(mr, rows - ir);
    if (a.cs == 1) {  // rows contiguous in k (forward, backward data): a transpose
      uk.transpose(d, mr, a.p + (m0 + ir) * a.rs + k0, a.rs, n, kc);
    } else {  // any other strides
      for (long k = 0; k < kc; ++k) {
        const float* s = a.p + (k0 + k) * a.cs + (m0 + ir) * a.rs;
        for (long i = 0; i < n; ++i) d[k * mr + i] = s[i * a.rs];
      }
    }
    for (long i = n; i < mr; ++i)
      for (long k = 0; k < kc; ++k) d[k * mr + i] = 0.0f;
  }
}

void pack_b(float* dst, MatrixView b, long k0, long kc, long n0, long cols, const GemmMicroKernel& uk) {
  const long nr = uk.nr;
  if (b.cs == 1) return pack_rows(dst, b.p + k0 * b.rs + n0, b.rs, kc, cols, nr);  // rows contiguous in n
  for (long jr = 0; jr < cols; jr += nr) {
    float* d = dst + (jr / nr) * kc * nr;
    const long n = std::min(nr, cols - jr);
    if (b.rs == 1) {  // contiguous in k (forward: b = weightᵀ): a transpose
      uk.transpose(d, nr, b.p + (n0 + jr) * b.cs + k0, b.cs, n, kc);
    } else {  // any other strides
      for (long k = 0; k < kc; ++k)
        for (long j = 0; j < n; ++j) d[k * nr + j] = b.p[(k0 + k) * b.rs + (n0 + jr + j) * b.cs];
    }
    for (long k = 0; k < kc; ++k)
      for (long j = n; j < nr; ++j) d[k * nr + j] = 0.0f;
  }
}

float* micro_kernel_panel(int which, std::size_t floats) {
  thread_local std::vector<float>* panel_slots[2] = {};
  std::vector<float>& panel = per_thread(panel_slots[which]);
  if (panel.size() < floats) panel.resize(floats);
  return panel.data();
}

namespace {

// About 5 us of work at 200 GFLOP/s (measured: a parallel_for wakes its workers in a few us).
constexpr double kMinChunkFlops = 1e6;

// The grain of a parallel_for over `tasks` equal parts of an M x N x K product: each chunk gets at least
// kMinChunkFlops (waking a worker costs microseconds, so a small product runs on the calling thread alone).
size_t chunk_grain(size_t tasks, long M, long N, long K) {
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  return std::clamp<size_t>(static_cast<size_t>(kMinChunkFlops * static_cast<double>(tasks) / flops), 1, tasks);
}

// Columns of C per call of the epilogue, at least (or the block's last): the block's rows x this many columns (128 KiB
// at 128 rows, in L2) after their column panels are computed. Called per micro-tile, the epilogue's loops ran over rows
// of 16 or 32 columns: the GELU of the forward pass took 2.6 ns an element on rows of 16, 0.7 ns on rows of 256 (the
// same code, its data in L1; the vector loop's set-up per row outweighed the row), about 10% of a 2048-wide forward.
constexpr long kEpilogueCols = 256;

// Floats packed per parallel_for chunk of the packing of B, at least (about 10 us of copying).
constexpr long kMinPackFloats = 32768;

struct ThreadBuffers {
  AlignedBuffer a;
  std::vector<float> edge;
};

// The micro-kernel table of the active SIMD level (count 0 at the portable level).
const GemmMicroKernel* active_table(int& count) {
  count = 0;
  switch (active_simd_level()) {
    case SimdLevel::AVX512: {
      const GemmMicroKernel* k = avx512_micro_kernels(count);
      if (count > 0) return k;
      [[fallthrough]];
    }
    case SimdLevel::AVX2: return avx2_micro_kernels(count);
    case SimdLevel::NEON: return neon_micro_kernels(count);
    case SimdLevel::Portable: break;
  }
  return nullptr;
}

const GemmMicroKernel* row_kernel_for_shape(const GemmMicroKernel* table, int count, long M, long N);

// The kernel gemm() runs for an M x N product (GemmKernelRole): the level's default; for a product narrower than its
// tile (the output layer: N = classes) the narrow kernel where it covers N, which computes fewer wasted columns; and
// where the default's rows fit M badly (more than 2% of the rows computed are padding: M = 100 on 8-row tiles wastes
// 4 of 104) the rows kernel if it wastes fewer (6x32 for M = 100).
const GemmMicroKernel* kernel_for_shape(long M, long N) {
  int count = 0;
  const GemmMicroKernel* table = active_table(count);
  if (count == 0) return nullptr;
  const GemmMicroKernel* chosen = row_kernel_for_shape(table, count, M, N);
  // A product narrower than the default tile: the column tile where it computes fewer padded outputs (M = 128, N = 10
  // on AVX2: 128 x 10 against the 6x16 tile's 132 x 16).
  const auto padded = [M, N](const GemmMicroKernel& k) { return round_up(M, k.mr) * round_up(N, k.nr); };
  for (int i = 1; i < count; ++i)
    if (table[i].role == GemmKernelRole::Columns && N < table[0].nr && padded(table[i]) < padded(*chosen))
      chosen = &table[i];
  return chosen;
}

// The kernel of the row tiles (every role but Columns) for an M x N product.
const GemmMicroKernel* row_kernel_for_shape(const GemmMicroKernel* table, int count, long M, long N) {
  const GemmMicroKernel* best = &table[0];
  for (int i = 1; i < count; ++i)
    if (table[i].role == GemmKernelRole::Narrow && table[i].nr >= N && table[i].nr < best->nr) return &table[i];
  const auto waste = [M](const GemmMicroKernel& k) { return round_up(M, k.mr) - M; };
  if (waste(*best) * 50 <= round_up(M, best->mr)) return best;
  for (int i = 1; i < count; ++i)
    if (table[i].role == GemmKernelRole::Rows && waste(table[i]) < waste(*best)) return &table[i];
  return best;
}

// Whether gemm() reads the operands in place instead of packing them (GemmBlocking): for products where packing
// costs as much as the arithmetic it serves (the output layer of a classifier; measured in docs/benchmarks.md). BLIS
// has the same idea as its "sup" (small/unpacked) code path.
bool use_in_place(MatrixView b, long M, long N, long K, const GemmMicroKernel& uk, const GemmBlocking& blk) {
  const double bytes = 4.0 * (static_cast<double>(M) * static_cast<double>(K) + static_cast<double>(K) * N);
  return b.cs == 1 && K <= blk.kc && bytes <= static_cast<double>(blk.in_place_max_bytes) &&
         (ceil_div(M, uk.mr) <= blk.in_place_max_row_tiles || K <= blk.in_place_max_k);
}

// gemm() without packing (use_in_place). A task is one column panel (NR columns) of a block of up to kRowTiles row
// tiles (MR rows each); its whole tiles are one call of the micro-kernel from a and b in place. Rows past the last
// whole tile are computed as the tile of the block's last MR rows (overlapping the one above) where the block has MR
// rows. Otherwise an edge tile (fewer than MR rows or NR columns) reads its rows of A or its columns of B from a
// zero-padded packed copy (made once per chunk of tasks where consecutive tasks share it) and is computed in a scratch
// tile, of which only the valid part is stored.
void gemm_in_place(float* c, long ldc, MatrixView a, MatrixView b, long M, long N, long K, ThreadPool& pool,
                   const GemmEpilogue* epilogue, const GemmMicroKernel& uk) {
  constexpr long kRowTiles = 8;  // per task: fewer calls, and several tasks per thread for balance
  const long MR = uk.mr, NR = uk.nr, full_rows = M / MR * MR, block = kRowTiles * MR;
  const long n_blocks = ceil_div(M, block), n_jr = ceil_div(N, NR);
  const size_t tasks = static_cast<size_t>(n_blocks * n_jr), grain = chunk_grain(tasks, M, N, K);
  pool.parallel_for(tasks, grain, [&](size_t t0, size_t t1) {
    thread_local ThreadBuffers* buf_slot = nullptr;
    thread_local AlignedBuffer *edge_a_slot = nullptr, *edge_b_slot = nullptr;
    ThreadBuffers& buf = per_thread(buf_slot);
    AlignedBuffer &edge_a = per_thread(edge_a_slot), &edge_b = per_thread(edge_b_slot);
    long packed_i0 = -1, packed_j0 = -1;  // the edge rows / columns whose packed copy this chunk holds
    buf.edge.resize(static_cast<size_t>(MR * NR));
    float* e = buf.edge.data();  // the scratch tile of edge tiles
    for (size_t t = t0; t < t1; ++t) {
      const long m0 = static_cast<long>(t) / n_jr * block, j0 = static_cast<long>(t) % n_jr * NR;
      const long m1 = std::min(M, m0 + block), nr = std::min(NR, N - j0);
      const float* bp = b.p + j0;
      long ldb = b.rs;
      if (nr < NR) {  // columns past N would be read from outside B: the nr columns, zero-padded to NR
        float* pb = edge_b.get(static_cast<size_t>(K * NR));
        if (packed_j0 != j0) pack_b(pb, b, 0, K, j0, nr, uk), packed_j0 = j0;
        bp = pb, ldb = NR;
      }
      const long whole_end = std::min(m1, full_rows);
      if (nr == NR && whole_end > m0) {
        uk.run_in_place((whole_end - m0) / MR, K, a.p + m0 * a.rs, a.rs, a.cs, bp, ldb, c + m0 * ldc + j0, ldc);
      } else {  // an edge panel: tile by tile through the scratch tile
        for (long i0 = m0; i0 < whole_end; i0 += MR) {
          uk.run_in_place(1, K, a.p + i0 * a.rs, a.rs, a.cs, bp, ldb, e, NR);
          for (long i = 0; i < MR; ++i) std::copy_n(e + i * NR, nr, c + (i0 + i) * ldc + j0);
        }
      }
      if (whole_end < m1 && nr == NR && m1 - m0 >= MR) {
        // The last rows, fewer than MR, as the tile of the block's last MR rows: it recomputes rows the tile above
        // already stored, with the same fma chains (the same bits), in this task, before its epilogue.
        uk.run_in_place(1, K, a.p + (m1 - MR) * a.rs, a.rs, a.cs, bp, ldb, c + (m1 - MR) * ldc + j0, ldc);
      } else if (whole_end < m1) {  // fewer than MR rows in the block: packed, zero-padded to MR
        const long mr = m1 - whole_end;
        float* pa = edge_a.get(static_cast<size_t>(MR * K));
        if (packed_i0 != whole_end) pack_a(pa, a, whole_end, mr, 0, K, uk), packed_i0 = whole_end;
        uk.run_in_place(1, K, pa, 1, MR, bp, ldb, e, NR);
        for (long i = 0; i < mr; ++i) std::copy_n(e + i * NR, nr, c + (whole_end + i) * ldc + j0);
      }
      if (epilogue) (*epilogue)(m0, m1, j0, j0 + nr);
    }
  });
}

// Phase 1 of gemm(): all of B (K x N) packed once into a buffer every task reads: slice pc (k in [pc, pc + kc)) at
// pc * round_up(N, NR), its micro-panel p (columns [p * NR, p * NR + NR)) at + p * kcur * NR. Units of work: one
// micro-panel of one slice. The buffer is the calling thread's (concurrent callers never share it), valid until its
// next call.
const float* pack_b_shared(MatrixView b, long N, long K, long kc, const GemmMicroKernel& uk, ThreadPool& pool) {
  const long NR = uk.nr, npad_all = round_up(N, NR), panels = npad_all / NR, slices = ceil_div(K, kc);
  thread_local AlignedBuffer* shared_b_slot = nullptr;  // the calling thread's: concurrent callers never share it
  AlignedBuffer& shared_b = per_thread(shared_b_slot);
  float* pb = shared_b.get(static_cast<size_t>(npad_all * K));
  const size_t pack_grain = static_cast<size_t>(std::max(1L, kMinPackFloats / (kc * NR)));
  pool.parallel_for(static_cast<size_t>(slices * panels), pack_grain, [&](size_t u0, size_t u1) {
    for (long u = static_cast<long>(u0); u < static_cast<long>(u1);) {  // the chunk's panels of a slice in one call
      const long pc = u / panels * kc, p0 = u % panels, p1 = std::min(panels, p0 + static_cast<long>(u1) - u);
      const long kcur = std::min(kc, K - pc);
      pack_b(pb + pc * npad_all + p0 * kcur * NR, b, pc, kcur, p0 * NR, std::min(p1 * NR, N) - p0 * NR, uk);
      u += p1 - p0;
    }
  });
  return pb;
}

}  // namespace

const GemmMicroKernel* active_micro_kernel() {
  int count = 0;
  const GemmMicroKernel* table = active_table(count);
  return count > 0 ? table : nullptr;
}

std::string gemm_kernel_name() {
  int count = 0;
  const GemmMicroKernel* table = active_table(count);
  if (count == 0) return "portable 5x16";
  std::string name = table[0].name;  // "AVX-512 8x32", then the tiles of the other roles: "AVX-512 8x32/6x32/12x16"
  for (const GemmKernelRole role : {GemmKernelRole::Rows, GemmKernelRole::Narrow, GemmKernelRole::Columns})
    for (int i = 1; i < count; ++i)
      if (table[i].role == role) {
        const std::string full = table[i].name;  // "AVX-512 6x32": the tile after the space
        name += '/';
        name += full.substr(full.rfind(' ') + 1);
      }
  return name;
}

void gemm(float* c, long ldc, MatrixView a, MatrixView b, long M, long N, long K, ThreadPool& pool,
          const GemmEpilogue* epilogue, const GemmMicroKernel* kernel, const GemmBlocking* blocking) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (long i = 0; i < M; ++i) std::fill_n(c + i * ldc, N, 0.0f);
    if (epilogue) (*epilogue)(0, M, 0, N);
    return;
  }
  if (kernel == nullptr) kernel = kernel_for_shape(M, N);
  const GemmMicroKernel& uk = *kernel;
  const long MR = uk.mr, NR = uk.nr;
  const GemmBlocking blk = blocking ? *blocking : GemmBlocking{};
  if (use_in_place(b, M, N, K, uk, blk)) return gemm_in_place(c, ldc, a, b, M, N, K, pool, epilogue, uk);
  const long kc = std::max(1L, std::min(blk.kc, K));
  long mc = std::min(round_up(std::max(blk.mc, MR), MR), round_up(M, MR));
  long nc = std::min(round_up(std::max(blk.nc, NR), NR), round_up(N, NR));
  // Enough tasks for every thread (at least 2 each, for balance), halving the rows of the block first: each task
  // packs its own rows of A, so cutting N would pack the same rows again in every column block.
  const long threads = pool.size();
  while (threads > 1 && ceil_div(M, mc) * ceil_div(N, nc) < 2 * threads) {
    if (mc > MR) mc = round_up(ceil_div(mc, 2), MR);
    else if (nc > NR) nc = round_up(ceil_div(nc, 2), NR);
    else break;
  }
  // The row tiles dealt evenly over the n_ic row blocks, the larger blocks first (M = 512 on 6-row tiles, 4 blocks:
  // 132, 132, 126, 122 rows instead of 132, 132, 132, 116, which left one of 2 threads idle for 3% of the call).
  const long n_ic = ceil_div(M, mc), n_jc = ceil_div(N, nc), row_tiles = ceil_div(M, MR);
  const long tiles_per_ic = row_tiles / n_ic, ic_extra = row_tiles % n_ic;
  const size_t tasks = static_cast<size_t>(n_ic * n_jc), grain = chunk_grain(tasks, M, N, K);

  // Phase 1: all of B packed once, shared by every task.
  const long npad_all = round_up(N, NR);
  const float* pb = pack_b_shared(b, N, K, kc, uk, pool);

  // Phase 2: the mc x nc blocks of C, each packing its rows of A slice by slice.
  pool.parallel_for(tasks, grain, [&](size_t t0, size_t t1) {
    thread_local ThreadBuffers* buf_slot = nullptr;
    ThreadBuffers& buf = per_thread(buf_slot);
    for (size_t t = t0; t < t1; ++t) {
      const long ic = static_cast<long>(t) / n_jc, jc = static_cast<long>(t) % n_jc;
      const long m0 = (ic * tiles_per_ic + std::min(ic, ic_extra)) * MR, n0 = jc * nc, cols = std::min(nc, N - n0);
      const long rows = std::min((tiles_per_ic + (ic < ic_extra ? 1 : 0)) * MR, M - m0);
      float* pa = buf.a.get(static_cast<size_t>(round_up(rows, MR) * kc));
      for (long pc = 0; pc < K; pc += kc) {
        const long kcur = std::min(kc, K - pc);
        const bool accumulate = pc > 0, last = pc + kcur >= K;
        pack_a(pa, a, m0, rows, pc, kcur, uk);
        const float* b_slice = pb + pc * npad_all + (n0 / NR) * kcur * NR;
        long ep0 = 0;  // the first column of the block not yet given to the epilogue
        for (long jr = 0; jr < cols; jr += NR) {
          const long nr = std::min(NR, cols - jr);
          const float* bp = b_slice + (jr / NR) * kcur * NR;
          for (long ir = 0; ir < rows; ir += MR) {
            const long mr = std::min(MR, rows - ir);
            const float* ap = pa + (ir / MR) * kcur * MR;
            float* ct = c + (m0 + ir) * ldc + n0 + jr;
            if (ir + MR < rows)  // the next tile's rows of C, which its micro-kernel loads first (from L2 or L3)
              for (long i = 0; i < MR; ++i) __builtin_prefetch(ct + (MR + i) * ldc, 1);
            if (mr == MR && nr == NR) {
              uk.run(kcur, ap, bp, ct, ldc, accumulate);
            } else {  // an edge tile: computed whole in a scratch tile, only its valid part stored
              buf.edge.resize(static_cast<size_t>(MR * NR));
              float* e = buf.edge.data();
              if (accumulate)
                for (long i = 0; i < mr; ++i) std::copy_n(ct + i * ldc, nr, e + i * NR);
              uk.run(kcur, ap, bp, e, NR, accumulate);
              for (long i = 0; i < mr; ++i) std::copy_n(e + i * NR, nr, ct + i * ldc);
            }
          }
          if (last && epilogue && (jr + nr - ep0 >= kEpilogueCols || jr + nr == cols)) {
            (*epilogue)(m0, m0 + rows, n0 + ep0, n0 + jr + nr);
            ep0 = jr + nr;
          }
        }
      }
    }
  });
}

}  // namespace cpu
