// The packing of the CPU GEMM's operands (gemm.hpp: pack_a, pack_b): copies of the rows and columns a task of gemm()
// needs, in the micro-panel layout the micro-kernels read (gemm_micro.hpp). Compiled for the baseline instruction set;
// the copies themselves are the active SIMD level's: its transposes (GemmMicroKernel::transpose) and its plain copies
// (GemmMicroKernel::pack_rows, gemm_pack_rows.inc).
#include <algorithm>

#include "cpu/gemm.hpp"
#include "cpu/gemm_micro.hpp"

namespace cpu {

void pack_a(float* dst, MatrixView a, long m0, long rows, long k0, long kc, const GemmMicroKernel& uk) {
  const long mr = uk.mr;
  if (a.rs == 1 && a.cs != 1)  // columns contiguous (backward weight reads dout transposed)
    return uk.pack_rows(dst, a.p + k0 * a.cs + m0, a.cs, kc, rows, mr);
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
  if (b.cs == 1) return uk.pack_rows(dst, b.p + k0 * b.rs + n0, b.rs, kc, cols, nr);  // rows contiguous in n
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
