// The CPU GEMM of the training kernels: C = A · B in fp32 with packed panels and a register-blocked SIMD micro-kernel
// (gemm_micro.hpp) chosen at run time for the CPU (simd.hpp), the output tiles split over a ThreadPool. The three
// GEMM forms of training are the same call with other strides, so no transpose is ever materialised:
//   forward          out (B,OC)   = inp (B,C) · weight (OC,C)ᵀ    A = inp,   B = weightᵀ (read along rows of weight)
//   backward data    dinp (B,C)   = dout (B,OC) · weight (OC,C)   A = dout,  B = weight
//   backward weight  dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C)    A = doutᵀ (read down columns of dout), B = inp
// Each output is one chain of fmas over k = 0..K-1 in order, starting from 0 (acc = fma(a, b, acc)), whatever the
// tile sizes and the number of threads: results are bit-identical across thread counts and equal to the plain loop
// `acc = std::fma(A(i,k), B(k,j), acc)`.
//
// Blocking (Goto & van de Geijn, "Anatomy of high-performance matrix multiplication", ACM TOMS 2008): all of B is
// packed once (slices of kc values of k, micro-panels of nr columns) into a buffer every thread reads, each part by
// the first task that needs it (B transposed: the forward form) or split over the threads before the tasks start
// (B's rows contiguous); C is cut into mc x nc blocks, one task each: a task packs its rows of A slice by slice
// (mc x kc, micro-panels of mr rows) and runs the micro-kernel over the block. The default kc is large (2048: one
// slice for every K of the models and the bench), unlike the classic L1-sized slice: each slice loads and stores the
// whole of C once more, which at 2048 x 2048 (16 MiB of C, from memory) cost more than streaming the B micro-panel
// from L2 instead of L1 (measured on a Zen 5 core, 1 MiB L2: docs/benchmarks.md).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace cpu {

class ThreadPool;
struct GemmMicroKernel;

// A matrix read in place: element (r, c) = p[r * rs + c * cs] (a transposed view swaps the strides).
struct MatrixView {
  const float* p;
  long rs, cs;
};

// A grow-only float buffer whose get(n) is 64-byte aligned (the micro-kernels load packed panels with aligned loads);
// the pointer stays valid until the next get() that grows it.
class AlignedBuffer {
 public:
  float* get(size_t n);

 private:
  std::vector<float> storage_;
};

// The packing of gemm(), for callers that run the micro-kernels themselves (cpu/conv.cpp):
//   pack_a: rows [m0, m0 + rows) and k in [k0, k0 + kc) of a, as micro-panels of uk.mr rows:
//           dst[(i / mr) * kc * mr + k * mr + i % mr]; rows past `rows` up to a multiple of mr are zero.
//   pack_b: k in [k0, k0 + kc) and columns [n0, n0 + cols) of b, as micro-panels of uk.nr columns:
//           dst[(j / nr) * kc * nr + k * nr + j % nr]; columns past `cols` up to a multiple of nr are zero.
// dst must hold the padded size and be 64-byte aligned (AlignedBuffer) for run() and run_indirect().
void pack_a(float* dst, MatrixView a, long m0, long rows, long k0, long kc, const GemmMicroKernel& uk);
void pack_b(float* dst, MatrixView b, long k0, long kc, long n0, long cols, const GemmMicroKernel& uk);

// Called once for each finished rectangle of C (rows [m0, m1), columns [n0, n1)) while it is still in cache, on the
// thread that computed it: the forward pass adds the bias and applies the activation there. The rectangles are a
// task's rows by a few hundred columns (gemm.cpp, kEpilogueCols), not single micro-tiles: rows long enough for the
// epilogue's vector loops.
using GemmEpilogue = std::function<void(long m0, long m1, long n0, long n1)>;

// The cache blocking: kc values of k per slice, mc rows and nc columns of C per task (rounded to the micro-tile).
// Products that packing cannot pay for are computed from the operands in place (gemm.cpp, "in place"): those with
// one slice of k (K <= kc) and rows of B contiguous where either B is used by at most in_place_max_row_tiles row
// tiles of the micro-kernel, whatever its size (the output layer's backward weight: M = classes), or K is at most
// in_place_max_k and A and B are at most in_place_max_bytes together (its backward data: K = classes).
// in_place_max_bytes = 0: always packed. In place, a task computes one column panel of 8 row tiles, or of one row
// tile where C is larger than in_place_tile_rows_bytes (gemm.cpp, gemm_in_place: such a product is bound by writing C).
// A packed B whose rows are contiguous is packed by all threads before the tasks start where it takes at most
// pack_all_max_bytes, else each group of its micro-panels by the first task that needs it (gemm.cpp, SharedPackedB).
struct GemmBlocking {
  long kc = 2048, mc = 256, nc = 2048;
  long in_place_max_bytes = 256 * 1024, in_place_max_row_tiles = 2, in_place_max_k = 32;
  long in_place_tile_rows_bytes = 1024 * 1024;
  long pack_all_max_bytes = 8 * 1024 * 1024;
};

// c (M,N; row stride ldc) = a (M,K) · b (K,N), overwritten, with `kernel` (default: the active level's micro-kernel,
// active_micro_kernel(), which must not be null; for N narrower than its tile, the level's narrower kernel). K = 0 gives zeros. epilogue may be null. c must not overlap a or b.
void gemm(float* c, long ldc, MatrixView a, MatrixView b, long M, long N, long K, ThreadPool& pool,
          const GemmEpilogue* epilogue = nullptr, const GemmMicroKernel* kernel = nullptr,
          const GemmBlocking* blocking = nullptr);

// The micro-kernel of the active SIMD level (simd.hpp); nullptr at the portable level, where the CPU kernels use
// their compiler-vectorized loops instead.
const GemmMicroKernel* active_micro_kernel();

// What runs the CPU GEMMs now, for device names and reports: the SIMD level and every tile gemm() may choose by
// shape, default first: "AVX-512 8x32/6x32/12x16", "AVX2 6x16/12x8" or "portable 5x16".
std::string gemm_kernel_name();

}  // namespace cpu
