// The packing of the CPU GEMM's operands (gemm.hpp: pack_a, pack_b): copies of the rows and columns a task of gemm()
// needs, in the micro-panel layout the micro-kernels read (gemm_micro.hpp). Compiled for the baseline instruction set;
// the transposes are the active SIMD level's (GemmMicroKernel::transpose).
#include <algorithm>

#include "cpu/gemm.hpp"
#include "cpu/gemm_micro.hpp"

namespace cpu {
namespace {

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

}  // namespace cpu
