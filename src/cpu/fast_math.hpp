// The element-wise math of the tuned CPU kernels (src/cpu/ops/), written so that the loops around it vectorize and
// every result is the same on every thread count, SIMD path and C library: e^z and ln x without a libm call, sqrt
// without errno, the tanh-approximated GELU and its derivative, and the work per parallel_for chunk. Neither uses
// -ffast-math: cpu::fma is spelled out where a fused multiply-add is meant (and no build lets the compiler contract
// a*b+c: -ffp-contract=off in every build, CMakeLists.txt).
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/model.hpp"
#include "cpu/exact_fma.hpp"

namespace cpu {

// Items per parallel_for chunk so that a chunk holds at least ~64k flops (or element updates): below that, waking a
// worker costs more than it saves.
inline size_t grain_for(double work_per_item) {
  constexpr double kMinChunkWork = 65536;
  return static_cast<size_t>(std::max(1.0, std::ceil(kMinChunkWork / std::max(work_per_item, 1.0))));
}

// std::clamp's result (v < lo ? lo : hi < v ? hi : v), always inlined: the SIMD level files that use exp_approx
// (elementwise_avx2.cpp, elementwise_avx512.cpp) must not instantiate a template that another file could link to
// (cmake/check_simd_symbols.cmake), and std::clamp<float> would be one.
[[gnu::always_inline]] inline float clamp_of(float v, float lo, float hi) { return v < lo ? lo : hi < v ? hi : v; }

// e^z for float without a libm call, so that the loops around it vectorize (always_inline: gcc vectorizes only what it
// has inlined by then): Cody-Waite range reduction z = n ln2 + r (|r| <= ln2/2, ln2 split into a 16-bit head and a
// tail) and the degree-7 Taylor polynomial of e^r (truncation < 5e-9); measured relative error <= 1.3 ulp. Saturates
// to ~1e-38 / ~2e38 outside [-87, 88].
[[gnu::always_inline]] inline float exp_approx(float z) {
  const float n = clamp_of((z * 1.44269504f + 12582912.0f) - 12582912.0f, -126.0f, 127.0f);  // round(z/ln2)
  float r = cpu::fma(n, -0.693145751953125f, z);
  r = clamp_of(cpu::fma(n, -1.4286068203094173e-06f, r), -0.35f, 0.35f);
  float p = cpu::fma(1.0f / 5040, r, 1.0f / 720);  // Horner, from the r^7 coefficient 1/7! down
  p = cpu::fma(p, r, 1.0f / 120);
  p = cpu::fma(p, r, 1.0f / 24);
  p = cpu::fma(p, r, 1.0f / 6);
  p = cpu::fma(p, r, 0.5f);
  p = cpu::fma(p, r, 1.0f);
  p = cpu::fma(p, r, 1.0f);
  return p * __builtin_bit_cast(float, (static_cast<int32_t>(n) + 127) << 23);  // p * 2^n (the builtin: as clamp_of)
}

// ln x for float, of trainscope's own, so that the CPU's losses have the same bits with every C library (glibc's
// and mingw-w64's logf differ in the last bit, and the Windows build's losses drifted from the Linux build's by that
// ulp). Only IEEE's correctly rounded +, -, *, / in double, so every platform computes the same double and rounds it
// the same way. The range reduction of Cody & Waite ("Software Manual for the Elementary Functions", 1980, ch. 5):
// x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln x = e ln2 + ln m, ln m = 2 atanh(s) with s = (m - 1)/(m + 1),
// |s| <= 0.1716, and 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) summed to s^21 (the first term left out is below
// 0.1716^22 / 23 < 1e-18 of s). For |e| >= 1, |e ln2| >= 0.69 > 2 |ln m|, so the sum does not cancel; the double is
// within a few 1e-16 of ln x, and its rounding to float the correctly rounded ln x but for x within that of a
// rounding tie (tests/test_cpu_fma.cpp counts them: none in its sweep). ln 0 = -inf, ln of a negative or NaN is NaN.
inline float log_of(float x) {
  if (!(x > 0.0f)) return x == 0.0f ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (x == std::numeric_limits<float>::infinity()) return x;
  int e = 0;
  if (x < std::numeric_limits<float>::min()) {  // a subnormal: times 2^23, exact
    x *= 8388608.0f;
    e = -23;
  }
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  e += static_cast<int>(bits >> 23) - 127;
  double m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);  // the mantissa, in [1, 2)
  if (m > 1.4142135623730951) {  // into [sqrt(1/2), sqrt(2)), exact
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double p = 1.0 / 21;  // Horner in s^2, from the s^21 term's 1/21 down to 1
  for (int k = 19; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
  constexpr double kLn2 = 0.6931471805599453;  // ln 2 rounded to double
  return static_cast<float>(static_cast<double>(e) * kLn2 + 2.0 * s * p);
}

// sqrt for the AdamW loop. With -fno-math-errno (gcc then defines __NO_MATH_ERRNO__; src/CMakeLists.txt sets it for
// the CPU layer) the square root vectorizes to vsqrtps; otherwise its errno contract keeps the loop scalar (5x
// slower), so the inverse square root by the bit-level first guess (constant 0x5f375a86, C. Lomont, "Fast inverse
// square root", 2003) and three Newton steps y <- y(1.5 - 0.5 v y²) is used: measured relative error <= 1.7e-7 for v
// in [1e-30, 1e30], sqrt(0) = 0.
// The builtins, not std::sqrt and std::bit_cast: the SIMD level files call this (adamw_row), and an inline function or
// template they instantiate may become the whole program's copy of it, compiled for their level (gemm_micro.hpp).
[[gnu::always_inline]] inline float sqrt_of(float v) {
#if defined(__NO_MATH_ERRNO__)
  return __builtin_sqrtf(v);
#else
  float y = __builtin_bit_cast(float, 0x5f375a86 - (__builtin_bit_cast(int32_t, v) >> 1));
  y = y * (1.5f - 0.5f * v * y * y);  // written out: a loop here is left rolled and blocks vectorization
  y = y * (1.5f - 0.5f * v * y * y);
  y = y * (1.5f - 0.5f * v * y * y);
  return v * y;
#endif
}

// AdamW's scalars for one step (ops/adamw_update.cpp computes them, in torch's order of operations).
struct AdamWCoefficients {
  float decay, step_size, inv_bc2_sqrt, b1, b2, eps;
};

// AdamW's update of elements [0, n) (torch.optim.AdamW; ops/adamw_update.cpp): m = b1 m + (1 - b1) g,
// v = b2 v + (1 - b2) g², p = p decay - step_size m / (sqrt(v) inv_bc2_sqrt + eps), each value rounded once per
// operation (no fused multiply-add), so every SIMD level gives the same bits. The scalars by value: by reference, gcc
// cannot prove that the stores to params, m and v leave them unchanged, reloads them every element and does not
// vectorize. Always inlined, so that each SIMD level's file compiles its own vector loop (elementwise_level.inc).
[[gnu::always_inline]] inline void adamw_row(float* params, float* m, float* v, const float* grads, long n,
                                             AdamWCoefficients k) {
  for (long i = 0; i < n; ++i) {
    const float g = grads[i];
    const float mi = k.b1 * m[i] + (1.0f - k.b1) * g;
    const float vi = k.b2 * v[i] + (1.0f - k.b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    params[i] = params[i] * k.decay - k.step_size * mi / (sqrt_of(vi) * k.inv_bc2_sqrt + k.eps);
  }
}

// The tanh-approximated GELU, rewritten with 0.5(1 + tanh u) = sigmoid(2u) (no cancellation for x << 0):
//   gelu(x) = x sigmoid(2u),  u = sqrt(2/pi)(x + 0.044715 x³)  (Hendrycks & Gimpel 2016; torch approximate='tanh')
//   gelu'(x) = sigmoid(2u) + 2x sigmoid(2u)(1 - sigmoid(2u)) u',  u' = sqrt(2/pi)(1 + 3 * 0.044715 x²)
inline constexpr double kGeluScaleD = 0.7978845608028654, kGeluCubicD = 0.044715;  // sqrt(2/pi), the cubic term
inline constexpr float kGeluScale = static_cast<float>(kGeluScaleD), kGeluCubic = static_cast<float>(kGeluCubicD);

[[gnu::always_inline]] inline float gelu_sigmoid(float x) {
  const float u = kGeluScale * (x + kGeluCubic * x * x * x);
  return 1.0f / (1.0f + exp_approx(-2.0f * u));
}

[[gnu::always_inline]] inline float gelu_grad(float x) {
  const float sg = gelu_sigmoid(x);
  const float du = kGeluScale * (1.0f + static_cast<float>(3 * kGeluCubicD) * x * x);
  return sg + 2.0f * x * sg * (1.0f - sg) * du;
}

// SiLU (swish), silu(x) = x sigmoid(x), and its derivative silu'(x) = sigmoid(x) (1 + x (1 - sigmoid(x)))
// (Elfwing et al. 2018; Ramachandran et al. 2017; torch.nn.SiLU). For x below -87 exp_approx saturates and the
// sigmoid is a denormal or 0: x sigmoid(x) is then within 1e-36 of the true value.
[[gnu::always_inline]] inline float silu_sigmoid(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

[[gnu::always_inline]] inline float silu_grad(float x) {
  const float s = silu_sigmoid(x);
  return s + x * s * (1.0f - s);
}

// out[i] = exp_approx(z[i]) for i < n (out may be z): the e^x of the softmaxes (the attention kernels,
// softmax_xent_forward_backward), run at the CPU's SIMD level through elementwise_loops().exp_row; it vectorizes.
[[gnu::always_inline]] inline void exp_row(const float* z, float* out, long n) {
  for (long i = 0; i < n; ++i) out[i] = exp_approx(z[i]);
}

// out[i] = act(in[i]) for i < n, as the fused epilogues of the GEMMs and convolutions apply it (in and out may be
// the same array); each loop vectorizes, and every element is the scalar formula, on every SIMD path.
[[gnu::always_inline]] inline void activate(const float* in, float* out, long n, core::Activation act) {
  switch (act) {
    case core::Activation::ReLU:
      for (long i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      return;
    case core::Activation::GELU:
      for (long i = 0; i < n; ++i) out[i] = in[i] * gelu_sigmoid(in[i]);
      return;
    case core::Activation::SiLU:
      for (long i = 0; i < n; ++i) out[i] = in[i] * silu_sigmoid(in[i]);
      return;
  }
}

// The fused epilogue of the forward GEMMs and convolutions (ops/matmul_forward.cpp, ops/conv2d_forward.cpp) over
// `rows` rows of n values, ld apart: sums[r * ld + i] += bias[i]; with apply_act also out[r * ld + i] =
// act(sums[r * ld + i]) (activate above). The add is one rounding however wide the vectors: the same bits on every
// SIMD path.
[[gnu::always_inline]] inline void bias_activate_rows(float* sums, const float* bias, float* out, long ld, long rows,
                                                      long n, bool apply_act, core::Activation act) {
  for (long r = 0; r < rows; ++r) {
    float* s = sums + r * ld;
    for (long i = 0; i < n; ++i) s[i] += bias[i];
    if (apply_act) activate(s, out + r * ld, n, act);
  }
}

// dpreact[i] = dout[i] * act'(preact[i]) for i < n (dpreact may be dout), as act_backward applies it; each loop
// vectorizes, and every element is the scalar formula, on every SIMD path.
[[gnu::always_inline]] inline void activation_gradient(const float* dout, const float* preact, float* dpreact, long n,
                                                       core::Activation act) {
  switch (act) {
    case core::Activation::ReLU:
      for (long i = 0; i < n; ++i) {
        const float d = dout[i];  // loaded unconditionally, so that the select vectorizes
        dpreact[i] = preact[i] > 0.0f ? d : 0.0f;
      }
      return;
    case core::Activation::GELU:
      for (long i = 0; i < n; ++i) dpreact[i] = dout[i] * gelu_grad(preact[i]);
      return;
    case core::Activation::SiLU:
      for (long i = 0; i < n; ++i) dpreact[i] = dout[i] * silu_grad(preact[i]);
      return;
  }
}

}  // namespace cpu
