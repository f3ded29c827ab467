// cpu::fma's software path (src/cpu/exact_fma.hpp, what runs where the compiler may not use the FMA instruction, as
// in a portable Windows build whose C library's fmaf is not correctly rounded) against the FMA instruction itself,
// bit for bit, on random operands and on the cases where rounding twice goes wrong: products that nearly cancel c,
// sums at a rounding tie, signed zeros, subnormals, infinities and NaN. And cpu::log_of (src/cpu/fast_math.hpp, the
// softmax's ln of its own, the same bits with every C library) against the C library's double log rounded to float.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.hpp"
#include "cpu/exact_fma.hpp"
#include "cpu/fast_math.hpp"
#include "skip.hpp"

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target("fma")]] float instruction_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
bool has_fma_instruction() { return __builtin_cpu_supports("fma"); }
#else
float instruction_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }  // aarch64: always fused
bool has_fma_instruction() { return true; }
#endif

bool same(float x, float y) {
  return (std::isnan(x) && std::isnan(y)) || std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
}

}  // namespace

TEST_CASE("cpu::fma_software equals the FMA instruction bit for bit") {
  if (!has_fma_instruction()) {
    test::skip("cpu::fma_software", "this CPU has no FMA instruction to compare with");
    return;
  }
  core::Pcg32 rng(20261128, 7);
  std::vector<float> a, b, c;
  auto add = [&](float x, float y, float z) { a.push_back(x), b.push_back(y), c.push_back(z); };
  for (int i = 0; i < 200000; ++i) {
    const float x = rng.uniform(-2.0f, 2.0f), y = rng.uniform(-2.0f, 2.0f);
    add(x, y, rng.uniform(-2.0f, 2.0f));
    // Near cancellation: c close to -x*y, where the low bits of the exact product decide the result.
    const float p = x * y;
    add(x, y, -p);
    add(x, y, std::nextafter(-p, 0.0f));
    // Random bit patterns: every exponent, subnormals, infinities and NaNs included.
    add(std::bit_cast<float>(rng.next_u32()), std::bit_cast<float>(rng.next_u32()), std::bit_cast<float>(rng.next_u32()));
  }
  // Ties: c + a*b exactly halfway between two floats, with the product's tail tipping it.
  for (int e = -30; e <= 30; ++e) {
    const float one = std::ldexp(1.0f, e), half_ulp = std::ldexp(1.0f, e - 24), tiny = std::ldexp(1.0f, e - 40);
    add(half_ulp, 1.0f, one);
    add(half_ulp + tiny, 1.0f, one);
    add(half_ulp - tiny, 1.0f, one);
    add(1.0f + std::ldexp(1.0f, -23), 1.0f + std::ldexp(1.0f, -23), -1.0f);
  }
  // Where rounding to double first lands exactly on a float tie: (1 + 2^-23)(1 - 2^-23) = 1 - 2^-46, and with
  // c = 2^24 + 2 the exact sum 2^24 + 3 - 2^-46 lies just below the midpoint of 2^24 + 2 and 2^24 + 4 (result
  // 2^24 + 2), while its double rounding is the midpoint itself, which ties to even (2^24 + 4).
  for (int e = -60; e <= 60; ++e) {
    const float s = std::ldexp(1.0f, e);
    add(s * (1.0f + std::ldexp(1.0f, -23)), 1.0f - std::ldexp(1.0f, -23), s * (std::ldexp(1.0f, 24) + 2.0f));
    add(s * (1.0f + std::ldexp(1.0f, -23)), -(1.0f - std::ldexp(1.0f, -23)), -s * (std::ldexp(1.0f, 24) + 2.0f));
  }
  const float inf = std::numeric_limits<float>::infinity();
  add(0.0f, -1.0f, 0.0f);
  add(-0.0f, 1.0f, -0.0f);
  add(inf, 0.0f, 1.0f);
  add(inf, 1.0f, -inf);
  add(std::numeric_limits<float>::denorm_min(), 0.5f, 0.0f);
  add(std::numeric_limits<float>::max(), 2.0f, -std::numeric_limits<float>::max());
  size_t mismatches = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float want = instruction_fma(a[i], b[i], c[i]), got = cpu::fma_software(a[i], b[i], c[i]);
    if (!same(want, got) && ++mismatches <= 5)
      FAIL_CHECK("fma(" << a[i] << ", " << b[i] << ", " << c[i] << "): instruction " << want << ", software " << got);
  }
  CHECK(mismatches == 0);
  // And the naive way (one rounding to double, one to float) does go wrong on these inputs, so the test can fail.
  size_t naive = 0;
  for (size_t i = 0; i < a.size(); ++i)
    naive += !same(instruction_fma(a[i], b[i], c[i]),
                   static_cast<float>(static_cast<double>(a[i]) * b[i] + static_cast<double>(c[i])));
  CHECK(naive > 0);
}

TEST_CASE("cpu::log_of is ln x correctly rounded to float but at rare ties, within one ulp everywhere") {
  // Every 601st float from the smallest subnormal to the largest finite one (3.5 million), and every 7th float of
  // [1, 16], where the softmax's sums lie (a sum of e^(z - max): 1 <= sum <= classes; 4.8 million).
  size_t inputs = 0, not_nearest = 0, beyond_ulp = 0;
  auto check = [&](uint32_t b) {
    const float x = std::bit_cast<float>(b), got = cpu::log_of(x);
    const float want = static_cast<float>(std::log(static_cast<double>(x)));  // double's error far below float's
    ++inputs;
    if (same(got, want)) return;
    ++not_nearest;
    if (got != std::nextafter(want, got) && ++beyond_ulp <= 5)
      FAIL_CHECK("log_of(" << x << ") = " << got << ", ln x to float " << want);
  };
  for (uint64_t b = 1; b < 0x7f800000u; b += 601) check(static_cast<uint32_t>(b));
  for (uint32_t b = std::bit_cast<uint32_t>(1.0f); b <= std::bit_cast<uint32_t>(16.0f); b += 7) check(b);
  MESSAGE(inputs, " inputs, ", not_nearest, " not the nearest float to ln x (one ulp off)");
  CHECK(beyond_ulp == 0);
  CHECK(not_nearest * 100000 <= inputs);  // rounding ties only: at most 1 in 100000
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(cpu::log_of(1.0f) == 0.0f);
  CHECK(cpu::log_of(0.0f) == -inf);
  CHECK(cpu::log_of(inf) == inf);
  CHECK(std::isnan(cpu::log_of(-1.0f)));
  CHECK(std::isnan(cpu::log_of(std::numeric_limits<float>::quiet_NaN())));
}
