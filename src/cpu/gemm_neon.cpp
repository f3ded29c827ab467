// The NEON code of the CPU kernels (AArch64's Advanced SIMD: 32 registers of 4 x fp32): the GEMM micro-kernels
// (gemm_micro.hpp) and the FMA-peak loop (fma_probe.hpp) from simd_kernels.inc, and the packing's transposes. Built
// only for AArch64, where every CPU has NEON (simd.hpp), so it needs no flags of its own; elsewhere the tables are
// empty. vfmaq_f32 is a fused multiply-add (FMLA: one rounding), so each output is the same fma chain as on x86 and
// the results are bit for bit those of the other levels.
//
// Register budget (32 q registers): mr x nr/4 accumulators + nr/4 vectors of B + 1 broadcast of A. With 4 FMA pipes
// of 4 cycles latency (Apple's performance cores; docs/arm.md), at least 16 independent accumulators keep them busy:
// 8x12 has 24 (+ 3 + 1 = 28 registers), 6x12 has 18 for row counts 8 fits badly, 12x8 has 24 for products at most 8
// columns wide. Chosen by that arithmetic: no ARM machine was at hand to measure them (docs/arm.md).
#include "cpu/gemm_micro.hpp"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>


namespace cpu {
namespace {

struct V {
  using type = float32x4_t;
  static constexpr int lanes = 4;
  static type zero() { return vdupq_n_f32(0.0f); }
  static type set1(float x) { return vdupq_n_f32(x); }
  static type load(const float* p) { return vld1q_f32(p); }
  static type loadu(const float* p) { return vld1q_f32(p); }  // NEON loads need no alignment
  static void storeu(float* p, type v) { vst1q_f32(p, v); }
  static type fmadd(type a, type b, type c) { return vfmaq_f32(c, a, b); }  // c + a * b, rounded once
  static float sum(type v) {
    return vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1) + vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3);
  }
};

// The transposing copy of the packing (gemm_micro.hpp, transpose): d[k * ldd + j] = s[j * lds + k] for j < rows,
// k < cols, in 4x4 blocks: TRN1/TRN2 on 32-bit lanes, then on 64-bit pairs, put element k of row j into lane j of
// vector k. Partial blocks load the missing rows as zeros and store only `rows` lanes; the last cols % 4 columns are
// copied one by one.
void transpose_neon(float* d, long ldd, const float* s, long lds, long rows, long cols) {
  const long full_k = cols / 4 * 4;
  for (long j0 = 0; j0 < rows; j0 += 4) {
    const long nj = rows - j0 < 4 ? rows - j0 : 4;
    for (long k0 = 0; k0 < full_k; k0 += 4) {
      float32x4_t r[4];
      for (int i = 0; i < 4; ++i) r[i] = i < nj ? vld1q_f32(s + (j0 + i) * lds + k0) : vdupq_n_f32(0.0f);
      const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
      const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
      const auto pairs = [](float32x4_t a, float32x4_t b, bool high) {
        const float64x2_t x = vreinterpretq_f64_f32(a), y = vreinterpretq_f64_f32(b);
        return vreinterpretq_f32_f64(high ? vtrn2q_f64(x, y) : vtrn1q_f64(x, y));
      };
      const float32x4_t c[4] = {pairs(t0, t2, false), pairs(t1, t3, false), pairs(t0, t2, true),
                                pairs(t1, t3, true)};
      for (int k = 0; k < 4; ++k) {
        float* out = d + (k0 + k) * ldd + j0;
        if (nj == 4) {
          vst1q_f32(out, c[k]);
        } else {
          float lane[4];
          vst1q_f32(lane, c[k]);
          for (long j = 0; j < nj; ++j) out[j] = lane[j];
        }
      }
    }
    for (long k = full_k; k < cols; ++k)
      for (long j = j0; j < j0 + nj; ++j) d[k * ldd + j] = s[j * lds + k];
  }
}

#include "cpu/simd_kernels.inc"
#include "cpu/gemm_pack_rows.inc"

const GemmMicroKernel kKernels[] = {
    {"NEON 8x12", 8, 12, micro_kernel<8, 3>, micro_kernel_in_place<8, 3>, transpose_neon, pack_rows_level,
     micro_kernel_indirect<8, 3>, GemmKernelRole::Default},
    {"NEON 6x12", 6, 12, micro_kernel<6, 3>, micro_kernel_in_place<6, 3>, transpose_neon, pack_rows_level,
     micro_kernel_indirect<6, 3>, GemmKernelRole::Rows},
    {"NEON 6x16", 6, 16, micro_kernel<6, 4>, micro_kernel_in_place<6, 4>, transpose_neon, pack_rows_level,
     micro_kernel_indirect<6, 4>, GemmKernelRole::Spare},
    {"NEON 12x8", 12, 8, micro_kernel<12, 2>, micro_kernel_in_place<12, 2>, transpose_neon, pack_rows_level,
     micro_kernel_indirect<12, 2>, GemmKernelRole::Narrow},  // for N <= 8
};

// 24 of the 32 registers: more chains than 4 pipes x 4 cycles of latency need, so a core with deeper FMA pipes still
// reaches its peak.
const SimdFmaLoop kFmaLoop = {fma_chains<24>, 4, 24, "q (4 x fp32)"};

}  // namespace

const GemmMicroKernel* neon_micro_kernels(int& count) {
  count = static_cast<int>(sizeof(kKernels) / sizeof(kKernels[0]));
  return kKernels;
}

const SimdFmaLoop* neon_fma_loop() { return &kFmaLoop; }

}  // namespace cpu
#else
namespace cpu {
const GemmMicroKernel* neon_micro_kernels(int& count) {
  count = 0;
  return nullptr;
}
const SimdFmaLoop* neon_fma_loop() { return nullptr; }
}  // namespace cpu
#endif
