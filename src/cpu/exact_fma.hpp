// cpu::fma: a fused multiply-add a*b + c rounded once, as IEEE 754 and std::fma define it, on every system. Where the
// compiler may use the FMA instruction (__FMA__: -mfma, -march=native on a CPU that has it; every AArch64 build) it is
// that instruction.
// Elsewhere std::fma is the C library's, and mingw-w64's fmaf is not correctly rounded (it differs from the
// instruction on about a quarter of random inputs), so it is computed here: a*b is exact in double (24 + 24 bits of
// significand fit in 53), the sum with c is made exact as s + e by TwoSum (Knuth, TAOCP vol. 2, 4.2.2), and s is
// rounded to odd before the one rounding to float; rounding to odd at 53 bits and then to nearest at 24 gives the
// correctly rounded result because 53 >= 2*24 + 2 (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers 2008).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace cpu {

// The computation without the instruction (what cpu::fma runs where __FMA__ is not defined); public for its test.
inline float fma_software(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);  // exact
  const double s = p + static_cast<double>(c);
  if (!std::isfinite(s)) return static_cast<float>(s);
  const double bv = s - p;  // TwoSum: s + e == p + c exactly
  const double e = (p - (s - bv)) + (static_cast<double>(c) - bv);
  uint64_t bits = std::bit_cast<uint64_t>(s);
  if (e != 0 && (bits & 1) == 0) bits += (e > 0) == (s > 0) ? 1 : -1;  // to odd: toward the exact value
  return static_cast<float>(std::bit_cast<double>(bits));
}

// always_inline: a SIMD level file (compiled with -mfma) must not emit a copy that another file could link to.
[[gnu::always_inline]] inline float fma(float a, float b, float c) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)  // AArch64: FMADD, in every AArch64 CPU
  return __builtin_fmaf(a, b, c);
#else
  return fma_software(a, b, c);
#endif
}

}  // namespace cpu
