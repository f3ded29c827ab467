// AVX2 micro-kernels of the CPU GEMM (see gemm_micro.hpp). This file alone is compiled with -mavx2 -mfma
// -mno-avx512f (src/CMakeLists.txt: even in a -march=native build on an AVX-512 machine it is pure AVX2, so the
// tests exercise exactly what an AVX2-only CPU runs) and is called only on CPUs with AVX2 and FMA (simd.hpp). Only
// the table at the end is visible outside this file.
//
// Register budget (16 ymm): 6 x 2 accumulators + 2 vectors of B + 1 broadcast of A = 15.
#include "cpu/gemm_micro.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace cpu {
namespace {

#include "cpu/gemm_transpose_avx.hpp"

template <int MR, int NV>
[[gnu::noinline]] void micro_kernel(long kc, const float* __restrict a, const float* __restrict b,
                                    float* __restrict c, long ldc, bool accumulate) {
  constexpr int NR = NV * 8;
  __m256 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? _mm256_loadu_ps(c + i * ldc + 8 * j) : _mm256_setzero_ps();
  for (long k = 0; k < kc; ++k) {
    __m256 bv[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = _mm256_load_ps(b + k * NR + 8 * j);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + k * MR + i);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm256_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) _mm256_storeu_ps(c + i * ldc + 8 * j, acc[i][j]);
}

const GemmMicroKernel kKernels[] = {
    {"AVX2 6x16", 6, 16, micro_kernel<6, 2>, transpose_avx},
    {"AVX2 4x24", 4, 24, micro_kernel<4, 3>, transpose_avx},
};

}  // namespace

const GemmMicroKernel* avx2_micro_kernels(int& count) {
  count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}

}  // namespace cpu
#else
namespace cpu {
const GemmMicroKernel* avx2_micro_kernels(int& count) {
  count = 0;
  return nullptr;
}
}  // namespace cpu
#endif
