// Bulk fp16/bf16 conversions: F16C for fp16 when the build targets it (-march=native on x86-64 with F16C), else the
// scalar conversions of half.hpp in a loop; bf16 as branch-free loops that the compiler vectorizes.
#include "core/half.hpp"

#if defined(__F16C__)
#include <immintrin.h>
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

#else

void to_fp16(uint16_t* dst, const float* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = float_to_fp16(src[i]);
}

void from_fp16(float* dst, const uint16_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_float(src[i]);
}

#endif

void to_bf16(uint16_t* __restrict dst, const float* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

void from_bf16(float* __restrict dst, const uint16_t* __restrict src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
}

}  // namespace core
