// Bulk fp16/bf16 conversions: F16C for fp16 when the build targets it (-march=native on x86-64 with F16C), NEON on
// AArch64 (fp16 by its conversion instructions, bf16 by integer shifts: half_neon.inc), else the scalar conversions of
// half.hpp in a loop; bf16 on x86 as branch-free loops that the compiler vectorizes.
#include "core/half.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define TRAINSCOPE_HALF_NEON 1
#endif

#include <cstring>

namespace core {

bool has_f16c() {
#if defined(__F16C__)
  return true;
#else
  return false;
#endif
}

const char* fp16_bulk_path() {
#if defined(__F16C__)
  return "F16C";
#elif defined(TRAINSCOPE_HALF_NEON)
  return "NEON";
#else
  return "scalar loop";
#endif
}

#if defined(__F16C__)

// The tail (n % 8 elements) goes through the same instruction on a zero-padded copy, so that every element of the
// output comes from the hardware conversion and tails are tested like the rest.
void to_fp16(uint16_t* dst, const float* src, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  if (i < n) {
    float in[8] = {};
    uint16_t out[8];
    std::memcpy(in, src + i, (n - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(dst + i, out, (n - i) * sizeof(uint16_t));
  }
}

void from_fp16(float* dst, const uint16_t* src, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  if (i < n) {
    uint16_t in[8] = {};
    float out[8];
    std::memcpy(in, src + i, (n - i) * sizeof(uint16_t));
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
    std::memcpy(dst + i, out, (n - i) * sizeof(float));
  }
}

#elif defined(TRAINSCOPE_HALF_NEON)

// As the F16C path: 4 lanes at a time by FCVTN / FCVTL (IEEE half precision: FPCR.AHP is 0 on every AArch64 OS), the
// tail through the same instructions on a zero-padded copy.
void to_fp16(uint16_t* dst, const float* src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
  if (i < n) {
    float in[4] = {};
    uint16_t out[4];
    std::memcpy(in, src + i, (n - i) * sizeof(float));
    vst1_u16(out, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in))));
    std::memcpy(dst + i, out, (n - i) * sizeof(uint16_t));
  }
}

void from_fp16(float* dst, const uint16_t* src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
  if (i < n) {
    uint16_t in[4] = {};
    float out[4];
    std::memcpy(in, src + i, (n - i) * sizeof(uint16_t));
    vst1q_f32(out, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(in))));
    std::memcpy(dst + i, out, (n - i) * sizeof(float));
  }
}

namespace {

// float_to_bf16 (half.hpp) on 4 lanes: the same integer arithmetic, wrapping modulo 2^32 as uint32_t does.
uint16x4_t to_bf16_lanes(float32x4_t x) {
  const uint32x4_t bits = vreinterpretq_u32_f32(x);
  const uint32x4_t high = vshrq_n_u32(bits, 16);
  const uint32x4_t lsb = vandq_u32(high, vdupq_n_u32(1u));
  const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(vaddq_u32(bits, vdupq_n_u32(0x7fffu)), lsb), 16);
  const uint32x4_t nan = vorrq_u32(high, vdupq_n_u32(0x0040u));
  const uint32x4_t is_nan = vcgtq_u32(vandq_u32(bits, vdupq_n_u32(0x7fffffffu)), vdupq_n_u32(0x7f800000u));
  return vmovn_u32(vbslq_u32(is_nan, nan, rounded));
}

// bf16_to_float on 4 lanes: the bits to the top half, a NaN made quiet.
float32x4_t from_bf16_lanes(uint16x4_t h) {
  const uint32x4_t bits = vshll_n_u16(h, 16);
  const uint32x4_t is_nan = vcgtq_u32(vandq_u32(bits, vdupq_n_u32(0x7fffffffu)), vdupq_n_u32(0x7f800000u));
  return vreinterpretq_f32_u32(vbslq_u32(is_nan, vorrq_u32(bits, vdupq_n_u32(0x00400000u)), bits));
}

}  // namespace

void to_bf16(uint16_t* dst, const float* src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(dst + i, to_bf16_lanes(vld1q_f32(src + i)));
  if (i < n) {
    float in[4] = {};
    uint16_t out[4];
    std::memcpy(in, src + i, (n - i) * sizeof(float));
    vst1_u16(out, to_bf16_lanes(vld1q_f32(in)));
    std::memcpy(dst + i, out, (n - i) * sizeof(uint16_t));
  }
}

void from_bf16(float* dst, const uint16_t* src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, from_bf16_lanes(vld1_u16(src + i)));
  if (i < n) {
    uint16_t in[4] = {};
    float out[4];
    std::memcpy(in, src + i, (n - i) * sizeof(uint16_t));
    vst1q_f32(out, from_bf16_lanes(vld1_u16(in)));
    std::memcpy(dst + i, out, (n - i) * sizeof(float));
  }
}

#else

void to_fp16(uint16_t* dst, const float* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = float_to_fp16(src[i]);
}

void from_fp16(float* dst, const uint16_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_float(src[i]);
}

#endif

#if !defined(TRAINSCOPE_HALF_NEON)

void to_bf16(uint16_t* __restrict dst, const float* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

void from_bf16(float* __restrict dst, const uint16_t* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
}

#endif

}  // namespace core
