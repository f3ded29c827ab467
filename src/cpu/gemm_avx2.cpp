// The AVX2 code of the CPU kernels: the GEMM micro-kernels (gemm_micro.hpp) and the FMA-peak loop (fma_probe.hpp)
// at ymm width, from simd_kernels.inc, and the packing's transposes. This file alone is compiled with -mavx2 -mfma
// -mno-avx512f (src/CMakeLists.txt: even in a -march=native build on an AVX-512 machine it is pure AVX2, so the tests
// exercise exactly what an AVX2-only CPU runs) and is called only on CPUs with AVX2 and FMA (simd.hpp). Only the
// tables at the end are visible outside this file.
//
// Register budget (16 ymm): 6 x 2 accumulators + 2 vectors of B + 1 broadcast of A = 15 (12x8: 12 + 1 + 1; the
// column tile 16x5c: 10 + 2 vectors of A + 1 broadcast of B). 6x16 is also BLIS's Haswell sgemm shape (its
// bli_cntx_init_haswell: MR 6, NR 16). Alone in L1 (thread CPU time, Zen 4 core, 2026-11-29) it runs at the FMA
// peak; 5x16, 14x8, 12x8 and 4x24 were measured at 100%, 89%, 81% and 71% of it: what the GEMMs lose is in the
// packing and the memory hierarchy, not in this loop (docs/benchmarks.md, "The AVX2 level").
#include "cpu/gemm_micro.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>


namespace cpu {
namespace {

struct V {
  using type = __m256;
  static constexpr int lanes = 8;
  static type zero() { return _mm256_setzero_ps(); }
  static type set1(float x) { return _mm256_set1_ps(x); }
  static type load(const float* p) { return _mm256_load_ps(p); }
  static type loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, type v) { _mm256_storeu_ps(p, v); }
  static type fmadd(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  static float sum(type v) {
    alignas(32) float lane[8];
    _mm256_store_ps(lane, v);
    float s = 0;
    for (float x : lane) s += x;
    return s;
  }
};

#include "cpu/gemm_transpose_avx.hpp"
#include "cpu/simd_kernels.inc"
#include "cpu/gemm_pack_rows.inc"

const GemmMicroKernel kKernels[] = {
    {"AVX2 6x16", 6, 16, micro_kernel<6, 2>, micro_kernel_in_place<6, 2>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<6, 2>, GemmKernelRole::Default},
    {"AVX2 4x24", 4, 24, micro_kernel<4, 3>, micro_kernel_in_place<4, 3>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<4, 3>, GemmKernelRole::Spare},
    {"AVX2 12x8", 12, 8, micro_kernel<12, 1>, micro_kernel_in_place<12, 1>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<12, 1>, GemmKernelRole::Narrow},  // for N <= 8
    // 16 rows in 2 vectors x 5 columns broadcast: 10 accumulators + 2 + 1 registers; 7 loads per 10 FMAs.
    // N = 10 classes: two tiles, no padding column.
    {"AVX2 16x5c", 16, 5, column_kernel<2, 5>, column_kernel_in_place<2, 5, transpose_avx>, transpose_avx,
     pack_rows_level, column_kernel_indirect<2, 5>, GemmKernelRole::Columns},
};

const SimdFmaLoop kFmaLoop = {fma_chains<12>, 8, 12, "ymm (8 x fp32)"};  // 12 of the 16 ymm registers

}  // namespace

const GemmMicroKernel* avx2_micro_kernels(int& count) {
  count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}

const SimdFmaLoop* avx2_fma_loop() { return &kFmaLoop; }

}  // namespace cpu
#else
namespace cpu {
const GemmMicroKernel* avx2_micro_kernels(int& count) {
  count = 0;
  return nullptr;
}
const SimdFmaLoop* avx2_fma_loop() { return nullptr; }
}  // namespace cpu
#endif
