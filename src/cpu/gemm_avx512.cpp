// AVX-512 micro-kernels of the CPU GEMM (see gemm_micro.hpp). This file alone is compiled with -mavx512f -mfma
// (src/CMakeLists.txt) and is called only on CPUs with AVX-512 (simd.hpp). Nothing here may be used from elsewhere
// except through the table at the end: no inline or template function of this file has external linkage, so no
// AVX-512 instruction can leak into code that runs on other CPUs.
//
// Register budget (32 zmm): mr x nr/16 accumulators + nr/16 vectors of B + 1 broadcast of A. With two FMA pipes of
// 4 cycles latency, at least 8 independent accumulators are needed to keep both busy; 6x32 has 12.
#include "cpu/gemm_micro.hpp"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

namespace cpu {
namespace {

#include "cpu/gemm_transpose_avx.hpp"

template <int MR, int NV>
[[gnu::noinline]] void micro_kernel(long kc, const float* __restrict a, const float* __restrict b,
                                    float* __restrict c, long ldc, bool accumulate) {
  constexpr int NR = NV * 16;
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? _mm512_loadu_ps(c + i * ldc + 16 * j) : _mm512_setzero_ps();
  for (long k = 0; k < kc; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_load_ps(b + k * NR + 16 * j);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[k * MR + i]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + i * ldc + 16 * j, acc[i][j]);
}

const GemmMicroKernel kKernels[] = {
    {"AVX-512 6x32", 6, 32, micro_kernel<6, 2>, transpose_avx},    {"AVX-512 8x32", 8, 32, micro_kernel<8, 2>, transpose_avx},
    {"AVX-512 12x32", 12, 32, micro_kernel<12, 2>, transpose_avx}, {"AVX-512 14x32", 14, 32, micro_kernel<14, 2>, transpose_avx},
    {"AVX-512 4x64", 4, 64, micro_kernel<4, 4>, transpose_avx},    {"AVX-512 8x48", 8, 48, micro_kernel<8, 3>, transpose_avx},
};

}  // namespace

const GemmMicroKernel* avx512_micro_kernels(int& count) {
  count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}

}  // namespace cpu
#else
namespace cpu {
const GemmMicroKernel* avx512_micro_kernels(int& count) {
  count = 0;
  return nullptr;
}
}  // namespace cpu
#endif
