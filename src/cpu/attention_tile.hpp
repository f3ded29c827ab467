// The products of the CPU's tiled attention (cpu/attention_fused.cpp): small dense products of one tile, such as a
// block of queries against a block of keys (32 x 64 scores from a head size of D), run through the CPU GEMM's packing
// and register-blocked micro-kernel of the active SIMD level (gemm.hpp, gemm_micro.hpp), so that the attention's
// multiply-adds run at the GEMMs' vector width instead of in the compiler's baseline loops. Each output is one chain
// of fused multiply-adds over k ascending (the micro-kernels' contract), so a tile's results do not depend on the
// thread that computes it. At the portable level (no micro-kernel) the same chains run as plain loops.
#pragma once
#include <vector>

#include "cpu/gemm.hpp"

namespace cpu {

// A head's rows in place (row stride `stride`, features contiguous), and their transpose.
inline MatrixView rows_at(const float* p, long stride) { return {p, stride, 1}; }
inline MatrixView columns_at(const float* p, long stride) { return {p, 1, stride}; }

// One operand of a tile product, packed for the micro-kernel where there is one: the left one (A, `n` rows by `kc`)
// or the right one (B, `kc` by `n` columns). `view` is the operand in place (the portable level reads it there).
struct TileOperand {
  MatrixView view;
  const float* packed;  // pack_a's or pack_b's micro-panels; nullptr at the portable level
  long n, kc;
};

// The tile shape the active micro-kernel pads to: rows to a multiple of mr, columns to a multiple of nr (1 and 1 at
// the portable level). The output of a product must have room for its padded rows and columns.
struct TilePad {
  long mr = 1, nr = 1;
  long rows(long n) const { return (n + mr - 1) / mr * mr; }
  long cols(long n) const { return (n + nr - 1) / nr * nr; }
};

// The active level's micro-kernel (nullptr: portable) and its padding, taken once per kernel call.
struct TileKernel {
  const GemmMicroKernel* uk;
  TilePad pad;
};
TileKernel tile_kernel();

// A (rows x kc, element (i, k) of `a`) packed into `buffer` as the micro-kernel reads it.
TileOperand pack_left(const TileKernel& tk, AlignedBuffer& buffer, MatrixView a, long rows, long kc);
// B (kc x cols, element (k, j) of `b`) packed into `buffer`.
TileOperand pack_right(const TileKernel& tk, AlignedBuffer& buffer, MatrixView b, long kc, long cols);

// c (a.n x b.n, row stride ldc) = (accumulate ? c : 0) + a · b, one fma chain per output over k ascending. c must
// hold tk.pad.rows(a.n) rows of tk.pad.cols(b.n) columns (the micro-kernel writes whole tiles); a.kc == b.kc.
void tile_multiply(const TileKernel& tk, float* c, long ldc, const TileOperand& a, const TileOperand& b,
                   bool accumulate);

// c = a (rows x kc) · b (kc x cols), both packed into `left` and `right` (any strides): the result in `out`, resized
// to tk.pad.rows(rows) rows of `ldc` = tk.pad.cols(cols) floats, which the caller copies where it belongs.
void tile_product(const TileKernel& tk, MatrixView a, MatrixView b, long rows, long kc, long cols, AlignedBuffer& left,
                  AlignedBuffer& right, std::vector<float>& out, long& ldc);

}  // namespace cpu
