// The AVX-512 code of the CPU kernels: the GEMM micro-kernels (gemm_micro.hpp) and the FMA-peak loop
// (fma_probe.hpp) at zmm width, from simd_kernels.inc, and the packing's transposes. This file alone is compiled with
// -mavx512f -mfma (src/CMakeLists.txt) and is called only on CPUs with AVX-512 (simd.hpp). Nothing here is visible
// outside except the tables at the end: no function of this file has external linkage, so no AVX-512 instruction can
// leak into code that runs on other CPUs.
//
// Register budget (32 zmm): mr x nr/16 accumulators + nr/16 vectors of B + 1 broadcast of A. With two FMA pipes of
// 4 cycles latency, at least 8 independent accumulators are needed to keep both busy; 8x32 has 16 (in L1 alone it
// runs at 98% of the FMA peak, 6x32 at 91%), 6x32 and 12x16 have 12. gemm() takes 6x32 where 8 rows fit M badly
// and 6 fit it better (M = 100), 12x16 for products at most 16 columns wide (it wastes fewer columns there).
#include "cpu/gemm_micro.hpp"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>


namespace cpu {
namespace {

struct V {
  using type = __m512;
  static constexpr int lanes = 16;
  static type zero() { return _mm512_setzero_ps(); }
  static type set1(float x) { return _mm512_set1_ps(x); }
  static type load(const float* p) { return _mm512_load_ps(p); }
  static type loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, type v) { _mm512_storeu_ps(p, v); }
  static type fmadd(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(type v) {
    alignas(64) float lane[16];
    _mm512_store_ps(lane, v);
    float s = 0;
    for (float x : lane) s += x;
    return s;
  }
};

#include "cpu/gemm_transpose_avx.hpp"
#include "cpu/simd_kernels.inc"
#include "cpu/gemm_pack_rows.inc"

const GemmMicroKernel kKernels[] = {
    {"AVX-512 8x32", 8, 32, micro_kernel<8, 2>, micro_kernel_in_place<8, 2>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<8, 2>, GemmKernelRole::Default},
    {"AVX-512 6x32", 6, 32, micro_kernel<6, 2>, micro_kernel_in_place<6, 2>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<6, 2>, GemmKernelRole::Rows},
    {"AVX-512 12x32", 12, 32, micro_kernel<12, 2>, micro_kernel_in_place<12, 2>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<12, 2>, GemmKernelRole::Spare},
    {"AVX-512 14x32", 14, 32, micro_kernel<14, 2>, micro_kernel_in_place<14, 2>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<14, 2>, GemmKernelRole::Spare},
    {"AVX-512 4x64", 4, 64, micro_kernel<4, 4>, micro_kernel_in_place<4, 4>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<4, 4>, GemmKernelRole::Spare},
    {"AVX-512 8x48", 8, 48, micro_kernel<8, 3>, micro_kernel_in_place<8, 3>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<8, 3>, GemmKernelRole::Spare},
    {"AVX-512 12x16", 12, 16, micro_kernel<12, 1>, micro_kernel_in_place<12, 1>, transpose_avx, pack_rows_level,
     micro_kernel_indirect<12, 1>, GemmKernelRole::Narrow},  // for N <= 16 (the output layer's classes)
    // 32 rows in 2 vectors x 5 columns broadcast (simd_kernels.inc, column_tile): the output layer's 10 classes in two
    // tiles with no padding column. Measured against 32x10c (20 accumulators): the same speed at best, slower at worst.
    {"AVX-512 32x5c", 32, 5, column_kernel<2, 5>, column_kernel_in_place<2, 5, transpose_avx>, transpose_avx,
     pack_rows_level, column_kernel_indirect<2, 5>, GemmKernelRole::Columns},
};

const SimdFmaLoop kFmaLoop = {fma_chains<16>, 16, 16, "zmm (16 x fp32)"};  // 16 of the 32 zmm registers

}  // namespace

const GemmMicroKernel* avx512_micro_kernels(int& count) {
  count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}

const SimdFmaLoop* avx512_fma_loop() { return &kFmaLoop; }

}  // namespace cpu
#else
namespace cpu {
const GemmMicroKernel* avx512_micro_kernels(int& count) {
  count = 0;
  return nullptr;
}
const SimdFmaLoop* avx512_fma_loop() { return nullptr; }
}  // namespace cpu
#endif
