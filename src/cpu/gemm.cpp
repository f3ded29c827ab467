// The packed, blocked CPU GEMM (see gemm.hpp): the loops around the micro-kernel and the split over threads (the
// packing of the operands: gemm_pack.cpp). Compiled for the baseline instruction set: only the micro-kernels
// (gemm_avx512.cpp, gemm_avx2.cpp, gemm_neon.cpp) use wider instructions.
#include "cpu/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
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

}  // namespace

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
// has the same idea as its "sup" (small/unpacked) code path. A B read by at most two row tiles is read in place
// whatever its size: packing reads and writes all of it to save at most one read (seed-mlp's 10 x 2048 x 512
// backward weight: 0.35 -> 0.17 ms in the step, AVX-512, 2 threads).
bool use_in_place(MatrixView b, long M, long N, long K, const GemmMicroKernel& uk, const GemmBlocking& blk) {
  const double bytes = 4.0 * (static_cast<double>(M) * static_cast<double>(K) + static_cast<double>(K) * N);
  return b.cs == 1 && K <= blk.kc && blk.in_place_max_bytes > 0 &&
         (ceil_div(M, uk.mr) <= blk.in_place_max_row_tiles ||
          (bytes <= static_cast<double>(blk.in_place_max_bytes) && K <= blk.in_place_max_k));
}

// gemm() without packing (use_in_place). A task is one column panel (NR columns) of a block of up to 8 row tiles (MR
// rows each), or of one row tile where C is larger than blk.in_place_tile_rows_bytes; its whole tiles are one call of
// the micro-kernel from a and b in place. Rows past the last whole tile are computed as the tile of the block's last
// MR rows (overlapping the one above) where the block has MR rows. Otherwise an edge tile (fewer than MR rows or NR
// columns) reads its rows of A or its columns of B from a zero-padded packed copy (made once per chunk of tasks where
// consecutive tasks share it) and is computed in a scratch tile, of which only the valid part is stored.
// One row tile where C is large: with K this small (the output layer's backward data, K = classes) the product is
// bound by writing C, and 8 tiles' rows of a 2048-wide C, 8 KiB apart, fall into one set of the L1 cache and evict
// one another before their lines are whole; a task of one tile writes 8 rows, and the chunk's next task the next
// piece of the same rows. seed-mlp's 512 x 2048 x 10 on 1 thread: 45 -> 121 GFLOP/s (AVX-512), 23 -> 66 (AVX2); a
// 128 x 128 C (64 KiB, in L2) keeps 8 tiles (one tile there was 5-25% slower).
void gemm_in_place(float* c, long ldc, MatrixView a, MatrixView b, long M, long N, long K, ThreadPool& pool,
                   const GemmEpilogue* epilogue, const GemmMicroKernel& uk, const GemmBlocking& blk) {
  const double c_bytes = 4.0 * static_cast<double>(M) * static_cast<double>(N);
  // Row tiles per task: 8 for fewer calls (and several tasks per thread for balance), 1 where C is large (above).
  const long row_tiles = c_bytes > static_cast<double>(blk.in_place_tile_rows_bytes) ? 1 : 8;
  const long MR = uk.mr, NR = uk.nr, full_rows = M / MR * MR, block = row_tiles * MR;
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

// All of B (K x N) packed once into a buffer every task of gemm() reads, each group of micro-panels by the first task
// that needs it: slice pc (k in [pc, pc + kc)) at pc * round_up(N, NR), its micro-panel p (columns [p * NR, p * NR +
// NR)) at + p * kcur * NR. The buffer is the calling thread's (concurrent callers never share it), valid until its
// next call. Packing all of B first, in a parallel_for of its own, had both threads copy at once (16 MiB of weights
// for a 2048 x 2048 layer, bound by memory bandwidth, which two cores do not double) and then wait for each other;
// packed on first use, one thread's copying overlaps the other's arithmetic, and a transposed micro-panel is used
// from the packing thread's own cache. Rows of B contiguous in n (backward data and weight) are packed in groups of
// kPackGroupFloats columns (one micro-panel at a time read 64 bytes per row of k, a TLB miss each: 5% slower at 2048
// x 2048), all of them first (pack_all) where the packed B takes at most GemmBlocking::pack_all_max_bytes, else on
// first use like the others. Measured on 2 threads of a Zen 5 EPYC, alternating in one process (docs/benchmarks.md,
// 2026-11-30): the 512 x 2048 x 2048 backward data on first use 4.5% faster at AVX-512 (1 thread: 3.4%), 1.0x at
// AVX2, the 2048 squares 1.0x; products with a B of 4 MiB and less 1-6% slower on first use, so they keep pack_all.
class SharedPackedB {
 public:
  SharedPackedB(MatrixView b, long N, long K, long kc, const GemmMicroKernel& uk)
      : b_(b), N_(N), kc_(kc), NR_(uk.nr), panels_(ceil_div(N, uk.nr)),
        group_(b.cs == 1 ? std::max(1L, kPackGroupFloats / uk.nr) : 1), groups_(ceil_div(panels_, group_)), uk_(uk) {
    thread_local AlignedBuffer* slot = nullptr;
    thread_local std::vector<unsigned char>* state_slot = nullptr;  // no allocation per call: 1% of a 128x10x128
    pb_ = per_thread(slot).get(static_cast<size_t>(panels_ * NR_ * K));
    std::vector<unsigned char>& state = per_thread(state_slot);
    state.assign(static_cast<size_t>(ceil_div(K, kc) * groups_), kFree);
    state_ = state.data();
  }

  // Every group packed now, split over the pool's threads.
  void pack_all(long K, ThreadPool& pool) {
    pool.parallel_for(static_cast<size_t>(ceil_div(K, kc_) * groups_), 1, [&](size_t u0, size_t u1) {
      for (long u = static_cast<long>(u0); u < static_cast<long>(u1); ++u) {
        const long pc = u / groups_ * kc_;
        pack(pc, std::min(kc_, K - pc), u % groups_, State(state_[u]));
      }
    });
  }

  // Micro-panel p of the slice that starts at k = pc (kcur values of k), packed. While another thread packs it, this
  // one packs the groups after it that nobody has claimed yet, instead of waiting.
  const float* panel(long pc, long kcur, long p) {
    unsigned char* slice = state_ + pc / kc_ * groups_;
    const long g = p / group_;
    if (State(slice[g]).load(std::memory_order_acquire) != kPacked) {
      if (claim(State(slice[g]))) pack(pc, kcur, g, State(slice[g]));
      for (long q = g + 1; State(slice[g]).load(std::memory_order_acquire) != kPacked; ++q)
        if (q >= groups_) std::this_thread::yield();
        else if (claim(State(slice[q]))) pack(pc, kcur, q, State(slice[q]));
    }
    return at(pc, kcur, p);
  }

 private:
  static constexpr long kPackGroupFloats = 256;
  using State = std::atomic_ref<unsigned char>;  // the calling thread's vector, shared by the tasks during the call
  static constexpr unsigned char kFree = 0, kPacking = 1, kPacked = 2;
  static bool claim(State s) {
    unsigned char expected = kFree;
    return s.load(std::memory_order_relaxed) == kFree && s.compare_exchange_strong(expected, kPacking);
  }
  float* at(long pc, long kcur, long p) const { return pb_ + pc * panels_ * NR_ + p * kcur * NR_; }
  void pack(long pc, long kcur, long g, State s) {
    const long n0 = g * group_ * NR_;
    pack_b(at(pc, kcur, g * group_), b_, pc, kcur, n0, std::min(group_ * NR_, N_ - n0), uk_);
    s.store(kPacked, std::memory_order_release);
  }

  MatrixView b_;
  long N_, kc_, NR_, panels_, group_, groups_;
  const GemmMicroKernel& uk_;
  unsigned char* state_ = nullptr;
  float* pb_ = nullptr;
};


// What every task of one gemm() call shares.
struct PackedGemm {
  float* c;
  long ldc;
  MatrixView a;
  long K, kc;
  const GemmMicroKernel& uk;
  const GemmEpilogue* epilogue;
  SharedPackedB& b;
};

// The tiles of rows [m0, m0 + rows) x columns [j0, j0 + nr) of C (one micro-panel of B, bp) over one slice of k.
void run_column(const PackedGemm& g, ThreadBuffers& buf, const float* pa, const float* bp, long kcur, bool accumulate,
                long m0, long rows, long j0, long nr) {
  const long MR = g.uk.mr, NR = g.uk.nr;
  for (long ir = 0; ir < rows; ir += MR) {
    const long mr = std::min(MR, rows - ir);
    const float* ap = pa + (ir / MR) * kcur * MR;
    float* ct = g.c + (m0 + ir) * g.ldc + j0;
    if (ir + MR < rows)  // the next tile's rows of C, which its micro-kernel loads first (from L2 or L3)
      for (long i = 0; i < MR; ++i) __builtin_prefetch(ct + (MR + i) * g.ldc, 1);
    if (mr == MR && nr == NR) {
      g.uk.run(kcur, ap, bp, ct, g.ldc, accumulate);
    } else {  // an edge tile: computed whole in a scratch tile, only its valid part stored
      buf.edge.resize(static_cast<size_t>(MR * NR));
      float* e = buf.edge.data();
      if (accumulate)
        for (long i = 0; i < mr; ++i) std::copy_n(ct + i * g.ldc, nr, e + i * NR);
      g.uk.run(kcur, ap, bp, e, NR, accumulate);
      for (long i = 0; i < mr; ++i) std::copy_n(e + i * NR, nr, ct + i * g.ldc);
    }
  }
}

// One task of gemm(): the block of rows [m0, m0 + rows) x columns [n0, n0 + cols) of C, slice by slice of k, packing
// its rows of A. Its column micro-panels run from column first_jr of the block to the end, then from the start: the
// tasks running at once start on different micro-panels of B, each packing its own instead of waiting for the other's
// (SharedPackedB). The order of the micro-panels changes no result: each output is one fma chain within its tile.
void run_block(const PackedGemm& g, ThreadBuffers& buf, long m0, long rows, long n0, long cols, long first_jr) {
  const long MR = g.uk.mr, NR = g.uk.nr;
  float* pa = buf.a.get(static_cast<size_t>(round_up(rows, MR) * g.kc));
  for (long pc = 0; pc < g.K; pc += g.kc) {
    const long kcur = std::min(g.kc, g.K - pc);
    const bool accumulate = pc > 0, last = pc + kcur >= g.K;
    pack_a(pa, g.a, m0, rows, pc, kcur, g.uk);
    for (const auto& [j_begin, j_end] : {std::pair{first_jr, cols}, std::pair{0L, first_jr}}) {
      long ep0 = j_begin;  // the first column of this run not yet given to the epilogue
      for (long jr = j_begin; jr < j_end; jr += NR) {
        const long nr = std::min(NR, cols - jr);
        run_column(g, buf, pa, g.b.panel(pc, kcur, (n0 + jr) / NR), kcur, accumulate, m0, rows, n0 + jr, nr);
        if (last && g.epilogue && (jr + nr - ep0 >= kEpilogueCols || jr + nr == j_end)) {
          (*g.epilogue)(m0, m0 + rows, n0 + ep0, n0 + jr + nr);
          ep0 = jr + nr;
        }
      }
    }
  }
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
  if (use_in_place(b, M, N, K, uk, blk)) return gemm_in_place(c, ldc, a, b, M, N, K, pool, epilogue, uk, blk);
  const long kc = std::max(1L, std::min(blk.kc, K));
  long mc = std::min(round_up(std::max(blk.mc, MR), MR), round_up(M, MR));
  long nc = std::min(round_up(std::max(blk.nc, NR), NR), round_up(N, NR));
  // A task for every thread, halving the rows of the block first: each task packs its own rows of A, so cutting N
  // would pack the same rows again in every column block. One task each, not more: every task streams all of its
  // column block of packed B, so smaller tasks read B more often. Two each had been the rule (for balance); one
  // each, measured on 2 threads of a Zen 5 EPYC, alternating, medians of 10: the classic benchmark's step (M = 512:
  // 2 tasks of 256 rows instead of 4 of 128) 3.4% faster at AVX-512 and 2% at AVX2, the CNN's 8% (docs/benchmarks.md).
  // Not measured: a CPU with performance and efficiency cores, where two tasks each may balance the slow cores better.
  const long threads = pool.size();
  while (threads > 1 && ceil_div(M, mc) * ceil_div(N, nc) < threads) {
    if (mc > MR) mc = round_up(ceil_div(mc, 2), MR);
    else if (nc > NR) nc = round_up(ceil_div(nc, 2), NR);
    else break;
  }
  // The row tiles dealt evenly over the n_ic row blocks, the larger blocks first (M = 512 on 6-row tiles, 4 blocks:
  // 132, 132, 126, 122 rows instead of 132, 132, 132, 116, which left one of 2 threads idle for 3% of the call).
  const long n_ic = ceil_div(M, mc), n_jc = ceil_div(N, nc), row_tiles = ceil_div(M, MR);
  const long tiles_per_ic = row_tiles / n_ic, ic_extra = row_tiles % n_ic;
  const size_t tasks = static_cast<size_t>(n_ic * n_jc), grain = chunk_grain(tasks, M, N, K);

  SharedPackedB pb(b, N, K, kc, uk);
  if (b.cs == 1 && 4.0 * static_cast<double>(K) * static_cast<double>(N) <= static_cast<double>(blk.pack_all_max_bytes))
    pb.pack_all(K, pool);
  const PackedGemm g{c, ldc, a, K, kc, uk, epilogue, pb};
  pool.parallel_for(tasks, grain, [&](size_t t0, size_t t1) {
    thread_local ThreadBuffers* buf_slot = nullptr;
    ThreadBuffers& buf = per_thread(buf_slot);
    for (size_t t = t0; t < t1; ++t) {
      const long ic = static_cast<long>(t) / n_jc, jc = static_cast<long>(t) % n_jc;
      const long m0 = (ic * tiles_per_ic + std::min(ic, ic_extra)) * MR, n0 = jc * nc, cols = std::min(nc, N - n0);
      const long rows = std::min((tiles_per_ic + (ic < ic_extra ? 1 : 0)) * MR, M - m0);
      run_block(g, buf, m0, rows, n0, cols, ic * ceil_div(cols, NR) / n_ic * NR);
    }
  });
}

}  // namespace cpu
