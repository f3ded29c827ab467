// 16-bit floating-point storage formats for mixed precision: fp16 (IEEE 754-2008 binary16) and bf16 (bfloat16, the
// upper 16 bits of a binary32), each kept in a uint16_t. Scalar conversions are portable bit manipulation
// (constexpr, usable in static_assert); the bulk conversions below use F16C where the build has it.
//
// Formats (sign, exponent, mantissa bits; bias):
//   fp16: 1, 5, 10; bias 15. Largest finite 65504, smallest normal 2^-14, smallest subnormal 2^-24.
//         (IEEE 754-2008, 3.6 "binary16")
//   bf16: 1, 8, 7; bias 127: the same range as float with 8 significant bits.
//         (Google Cloud TPU docs "bfloat16"; Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training")
//
// Rounding and special values, the same in every function here (scalar and bulk give identical bits):
//   - float -> 16 bits rounds to nearest, ties to even (IEEE 754-2008 roundTiesToEven), subnormals included:
//     fp16 results below 2^-14 are fp16 subnormals; float subnormals -> bf16 round on the bit pattern.
//   - Overflow gives ±inf: fp16 for |x| >= 65520 (the midpoint between 65504 and 2^16, which ties to the even 2^16),
//     bf16 for |x| >= (2 - 2^-8) * 2^127, so FLT_MAX (3.4028235e38) becomes +inf in bf16.
//   - ±0 and ±inf keep their sign. A NaN stays a NaN with its sign, is made quiet (the top mantissa bit set, as
//     x86's F16C does), and keeps the top mantissa bits of its payload that fit; it never becomes inf.
//   - 16 bits -> float is exact (every fp16 and bf16 value is a float); a signalling NaN comes back quiet.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace core {

// float -> fp16 bits, round to nearest even.
constexpr uint16_t float_to_fp16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u)  // NaN: quiet bit 9, payload bits 22..13 -> 9..0
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x03ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (inf included) -> inf
  if (abs >= 0x38800000u) {
    // Normal in fp16 (>= 2^-14): rebias the exponent (127 -> 15) and round away the 13 low mantissa bits. A carry
    // out of the mantissa correctly bumps the exponent (at most to 65504 -> inf is excluded above).
    const uint32_t r = abs - 0x38000000u;
    return static_cast<uint16_t>(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
  }
  // Subnormal (or zero) in fp16: the result counts units of 2^-24. value = m * 2^(e - 150) with the implicit bit in m,
  // so in units of 2^-24 it is m >> (126 - e), rounded to nearest even. Below 2^-25 (shift > 24) it is 0.
  const uint32_t e = abs >> 23;
  if (e < 102) return sign;
  const uint32_t m = (abs & 0x007fffffu) | 0x00800000u;
  const uint32_t shift = 126 - e;  // 14 .. 24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into 0x0400 = 2^-14, the smallest normal
  return static_cast<uint16_t>(sign | q);
}

// fp16 bits -> float, exact.
constexpr float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x03ffu;
  if (exp == 0x1f)  // inf, or NaN made quiet (float bit 22)
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal: mant * 2^-24; normalise so the leading 1 lands on bit 10 (it becomes the implicit bit).
  const int lead = std::bit_width(mant) - 1;  // 0 .. 9
  const uint32_t m = (mant << (10 - lead)) & 0x03ffu;
  const uint32_t e = static_cast<uint32_t>(lead + 103);  // 2^(lead - 24) with bias 127
  return std::bit_cast<float>(sign | (e << 23) | (m << 13));
}

// float -> bf16 bits, round to nearest even on the 16 dropped bits (subnormals and the overflow to inf included).
// Branch-free, so that the bulk loop vectorizes.
constexpr uint16_t float_to_bf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t nan = (bits >> 16) | 0x0040u;  // quiet bit 6: a NaN whose payload sits in the low 16 bits stays NaN
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// bf16 bits -> float, exact (a signalling NaN comes back quiet). Branch-free.
constexpr float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  return std::bit_cast<float>((bits & 0x7fffffffu) > 0x7f800000u ? bits | 0x00400000u : bits);
}

// Bulk conversions of n elements: dst[i] = <scalar conversion>(src[i]), bit-identical to the scalar functions.
// dst and src must not overlap; no alignment required. fp16 uses F16C (8 lanes, round to nearest even by the
// instruction's immediate, whatever MXCSR says) when compiled with __F16C__, NEON's conversions on AArch64 (round
// to nearest even: FPCR's default mode, which nothing here changes), else the scalar loop; bf16 is a branch-free loop
// the compiler vectorizes, or the same arithmetic in NEON integer lanes on AArch64. has_f16c() says whether the fp16
// path is F16C; fp16_bulk_path() names the path this build took ("F16C", "NEON", "scalar loop").
void to_fp16(uint16_t* dst, const float* src, size_t n);
void from_fp16(float* dst, const uint16_t* src, size_t n);
void to_bf16(uint16_t* dst, const float* src, size_t n);
void from_bf16(float* dst, const uint16_t* src, size_t n);
bool has_f16c();
const char* fp16_bulk_path();

}  // namespace core
