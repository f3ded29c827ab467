// fp16 and bf16 conversions (core/half.hpp): every 16-bit pattern through float and back, every midpoint between
// neighbouring 16-bit values (ties to even), overflow, subnormals, signed zero, NaN, a double-precision reference
// for random floats, and the bulk (F16C / vectorized) conversions bit-identical to the scalar ones, tails included.
#include <doctest/doctest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/rng.hpp"

namespace {

using core::bf16_to_float;
using core::float_to_bf16;
using core::float_to_fp16;
using core::fp16_to_float;

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }
float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
bool fp16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0; }

// Counts failures of a per-element check and shows the first few, so an exhaustive loop fails with one readable
// CHECK instead of thousands.
struct Mismatches {
  int count = 0;
  template <typename... Args>
  void add(const Args&... what) {
    if (count++ >= 5) return;
    std::ostringstream os;
    (os << ... << what);
    MESSAGE(os.str());
  }
};

// The value of a non-NaN fp16 pattern from the IEEE 754-2008 definition, in double (sign, 5-bit exponent,
// 10-bit fraction; exponent 31 is infinity).
double fp16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 31  ? std::numeric_limits<double>::infinity()
                     : e == 0 ? std::ldexp(m, -24)
                              : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

// Round-to-nearest-even of a finite float to a format with `mant_bits` fraction bits, minimum normal exponent
// `emin` and overflow threshold `inf_at` (the midpoint above the largest finite value), computed in double:
// |x| / ulp is rounded by std::nearbyint in the default FE_TONEAREST mode. Independent of the bit tricks under test.
double reference_round(float x, int mant_bits, int emin, double inf_at) {
  const double ax = std::fabs(static_cast<double>(x));
  double y;
  if (ax >= inf_at) {
    y = std::numeric_limits<double>::infinity();
  } else if (ax == 0) {
    y = 0;
  } else {
    int e = 0;
    std::frexp(ax, &e);  // ax = f * 2^e, f in [0.5, 1): the leading bit has weight 2^(e-1)
    const double ulp = std::ldexp(1.0, std::max(e - 1, emin) - mant_bits);
    y = std::nearbyint(ax / ulp) * ulp;
  }
  return std::signbit(x) ? -y : y;
}
constexpr double kFp16InfAt = 65520.0;
const double kBf16InfAt = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);

// Floats that stress the conversions: signed zeros, infinities, NaNs (quiet, signalling, payload only in the low
// bits, negative), float subnormals, fp16 limits and their neighbours.
std::vector<float> special_floats() {
  std::vector<uint32_t> u = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001,
                             0xff800001, 0x7fa00000, 0x7fffffff, 0xffffffff, 0x7f801fff, 0x7f802000, 0x00000001,
                             0x80000001, 0x00008000, 0x00018000, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
                             0x7f7f8000, 0x7f7f7fff, 0x477fe000, 0x477fefff, 0x477ff000, 0xc77ff000, 0x33000000,
                             0x33000001, 0x33400000, 0x387fc000, 0x38800000, 0x3f801000, 0x3f803000, 0x3f808000};
  std::vector<float> f;
  for (uint32_t v : u) f.push_back(from_bits(v));
  return f;
}

}  // namespace

TEST_CASE("fp16: every one of the 65536 patterns converts exactly to float and back") {
  Mismatches bad;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = fp16_to_float(h);
    const uint16_t back = float_to_fp16(f);
    if (fp16_is_nan(h)) {
      // NaN stays NaN with its sign and payload; a signalling NaN (bit 9 clear) comes back quiet.
      if (!std::isnan(f) || std::signbit(f) != bool(h & 0x8000) || back != (h | 0x0200))
        bad.add("NaN ", h, " -> float bits ", bits(f), " -> ", back);
    } else {
      if (static_cast<double>(f) != fp16_value(h) || std::signbit(f) != bool(h & 0x8000) || back != h)
        bad.add("pattern ", h, " -> ", f, " (expected ", fp16_value(h), ") -> ", back);
    }
  }
  CHECK(bad.count == 0);
}

TEST_CASE("fp16: ties round to even at exact midpoints") {
  CHECK(float_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // 1 + half an ulp -> 1 (even)
  CHECK(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // 1 + 1.5 ulp -> 1 + 2^-9 (even)
  CHECK(float_to_fp16(-(1.0f + std::ldexp(1.0f, -11))) == 0xbc00);
  CHECK(float_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -23)) == 0x3c01);  // just above the tie
  CHECK(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11) - std::ldexp(1.0f, -23)) == 0x3c01);  // just below

  // Every midpoint between neighbouring positive fp16 values (subnormal, normal, the carry into the next binade,
  // 65504 -> 2^16 = inf) rounds to the even neighbour; one float ulp either side rounds to the nearer one.
  Mismatches bad;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = fp16_value(static_cast<uint16_t>(h));
    const double hi = h + 1 < 0x7c00 ? fp16_value(static_cast<uint16_t>(h + 1)) : 65536.0;
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits
    REQUIRE(static_cast<double>(mid) == (lo + hi) / 2);
    const uint16_t even = static_cast<uint16_t>((h & 1) ? h + 1 : h);
    for (float sign : {1.0f, -1.0f}) {
      const uint16_t s = sign < 0 ? 0x8000 : 0;
      if (float_to_fp16(sign * mid) != (even | s)) bad.add("midpoint above ", h, " sign ", sign);
      if (float_to_fp16(sign * std::nextafter(mid, 0.0f)) != (h | s)) bad.add("below midpoint above ", h);
      if (float_to_fp16(sign * std::nextafter(mid, INFINITY)) != ((h + 1) | s)) bad.add("above midpoint ", h);
    }
  }
  CHECK(bad.count == 0);
}

TEST_CASE("fp16: largest finite value and overflow to infinity") {
  CHECK(float_to_fp16(65504.0f) == 0x7bff);
  CHECK(fp16_to_float(0x7bff) == 65504.0f);
  CHECK(float_to_fp16(65519.99f) == 0x7bff);
  CHECK(float_to_fp16(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  CHECK(float_to_fp16(65520.0f) == 0x7c00);  // the midpoint to 2^16 ties to the even 2^16, which is inf
  CHECK(float_to_fp16(-65520.0f) == 0xfc00);
  CHECK(float_to_fp16(65536.0f) == 0x7c00);
  CHECK(float_to_fp16(70000.0f) == 0x7c00);
  CHECK(float_to_fp16(1e6f) == 0x7c00);
  CHECK(float_to_fp16(FLT_MAX) == 0x7c00);
  CHECK(float_to_fp16(-FLT_MAX) == 0xfc00);
  CHECK(float_to_fp16(INFINITY) == 0x7c00);
  CHECK(float_to_fp16(-INFINITY) == 0xfc00);
  CHECK(fp16_to_float(0x7c00) == INFINITY);
  CHECK(fp16_to_float(0xfc00) == -INFINITY);
}

TEST_CASE("fp16: subnormals and signed zero") {
  CHECK(float_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(fp16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(float_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);      // half of it: tie to even (0)
  CHECK(float_to_fp16(-std::ldexp(1.0f, -25)) == 0x8000);     // ... keeping the sign
  CHECK(float_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(float_to_fp16(3 * std::ldexp(1.0f, -26)) == 0x0001);  // 0.75 units -> 1 unit of 2^-24
  CHECK(float_to_fp16(3 * std::ldexp(1.0f, -25)) == 0x0002);  // 1.5 units -> 2 (even)
  CHECK(float_to_fp16(5 * std::ldexp(1.0f, -25)) == 0x0002);  // 2.5 units -> 2 (even)
  CHECK(float_to_fp16(1023 * std::ldexp(1.0f, -24)) == 0x03ff);  // largest subnormal
  CHECK(float_to_fp16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)) == 0x0400);  // carries into the smallest normal
  CHECK(float_to_fp16(std::ldexp(1.0f, -14)) == 0x0400);
  CHECK(fp16_to_float(0x03ff) == 1023 * std::ldexp(1.0f, -24));
  CHECK(float_to_fp16(from_bits(0x00000001)) == 0x0000);  // float subnormals are far below fp16's range
  CHECK(float_to_fp16(from_bits(0x80000001)) == 0x8000);
  CHECK(float_to_fp16(0.0f) == 0x0000);
  CHECK(float_to_fp16(-0.0f) == 0x8000);
  CHECK(std::signbit(fp16_to_float(0x8000)));
  CHECK(fp16_to_float(0x8000) == 0.0f);
}

TEST_CASE("fp16: NaN stays a quiet NaN with its sign, never inf") {
  CHECK(float_to_fp16(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  CHECK(float_to_fp16(from_bits(0x7f800001)) == 0x7e00);  // payload only in bits dropped: still NaN, not inf
  CHECK(float_to_fp16(from_bits(0xff800001)) == 0xfe00);
  CHECK(float_to_fp16(from_bits(0x7fa00000)) == 0x7f00);  // signalling with payload: quiet, payload kept
  CHECK(fp16_is_nan(float_to_fp16(from_bits(0x7fffffff))));
  const float f = fp16_to_float(0x7c01);  // signalling fp16 NaN
  CHECK(std::isnan(f));
  CHECK((bits(f) & 0x00400000u) != 0);  // quiet
  CHECK(std::signbit(fp16_to_float(0xfe00)));
}

TEST_CASE("fp16 and bf16: random floats match a double-precision reference of round to nearest even") {
  core::Pcg32 rng(2024, 3);
  Mismatches bad16, badbf;
  for (int i = 0; i < 1'000'000; ++i) {
    // Uniform exponents from 2^-30 to 2^17 (fp16's whole range and past it) for fp16, all finite floats for bf16.
    const float a = std::ldexp(1.0f + rng.uniform(), static_cast<int>(rng.below(48)) - 30) * (rng.below(2) ? 1 : -1);
    const uint32_t u = rng.next_u32();
    if (static_cast<double>(fp16_to_float(float_to_fp16(a))) != reference_round(a, 10, -14, kFp16InfAt))
      bad16.add("fp16 of ", a);
    const float b = from_bits(u);
    if (std::isfinite(b) &&
        static_cast<double>(bf16_to_float(float_to_bf16(b))) != reference_round(b, 7, -126, kBf16InfAt))
      badbf.add("bf16 of bits ", u);
  }
  CHECK(bad16.count == 0);
  CHECK(badbf.count == 0);
}

TEST_CASE("bf16: every one of the 65536 patterns converts exactly to float and back") {
  Mismatches bad;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float f = bf16_to_float(b);
    const uint16_t back = float_to_bf16(f);
    if (bf16_is_nan(b)) {
      if (!std::isnan(f) || std::signbit(f) != bool(b & 0x8000) || back != (b | 0x0040))
        bad.add("NaN ", b, " -> float bits ", bits(f), " -> ", back);
    } else if (bits(f) != (i << 16) || back != b) {
      bad.add("pattern ", b, " -> float bits ", bits(f), " -> ", back);
    }
  }
  CHECK(bad.count == 0);
}

TEST_CASE("bf16: ties to even on the 16 dropped bits, overflow, subnormals, NaN") {
  // Every midpoint (dropped bits exactly 0x8000) of every positive finite pattern, and one bit either side.
  Mismatches bad;
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const uint32_t even = (b & 1) ? b + 1 : b;
    for (uint32_t s : {0u, 0x8000u}) {
      const uint32_t base = (b | s) << 16;
      if (float_to_bf16(from_bits(base | 0x8000)) != (even | s)) bad.add("midpoint of ", b | s);
      if (float_to_bf16(from_bits(base | 0x7fff)) != (b | s)) bad.add("below midpoint of ", b | s);
      if (float_to_bf16(from_bits(base | 0x8001)) != ((b + 1) | s)) bad.add("above midpoint of ", b | s);
    }
  }
  CHECK(bad.count == 0);

  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(from_bits(0x3f808000)) == 0x3f80);  // 1 + 2^-8: tie -> 1 (even)
  CHECK(float_to_bf16(from_bits(0x3f818000)) == 0x3f82);  // 1 + 3*2^-8: tie -> 1 + 2^-6 (even)
  // FLT_MAX = (2 - 2^-23) * 2^127 lies above bf16's midpoint (2 - 2^-8) * 2^127 between its largest finite
  // (2 - 2^-7) * 2^127 and 2^128, so round to nearest even gives +inf (IEEE 754-2008, 4.3.1 and 7.4 overflow).
  CHECK(float_to_bf16(FLT_MAX) == 0x7f80);
  CHECK(float_to_bf16(-FLT_MAX) == 0xff80);
  CHECK(float_to_bf16(from_bits(0x7f7f7fff)) == 0x7f7f);  // just below that midpoint: the largest finite bf16
  CHECK(float_to_bf16(INFINITY) == 0x7f80);
  CHECK(float_to_bf16(-INFINITY) == 0xff80);
  // Float subnormals round on the bit pattern; the largest one carries into the smallest normal.
  CHECK(float_to_bf16(from_bits(0x00008000)) == 0x0000);
  CHECK(float_to_bf16(from_bits(0x00018000)) == 0x0002);
  CHECK(float_to_bf16(from_bits(0x00008001)) == 0x0001);
  CHECK(float_to_bf16(from_bits(0x007fffff)) == 0x0080);
  CHECK(bits(bf16_to_float(0x0001)) == 0x00010000u);  // bf16 subnormal -> float subnormal, exact
  CHECK(float_to_bf16(-0.0f) == 0x8000);
  CHECK(std::signbit(bf16_to_float(0x8000)));
  // NaN whose upper 16 bits alone would read as inf stays NaN; the all-ones NaN must not wrap to -0 by rounding.
  CHECK(float_to_bf16(from_bits(0x7f800001)) == 0x7fc0);
  CHECK(float_to_bf16(from_bits(0xff800001)) == 0xffc0);
  CHECK(float_to_bf16(from_bits(0x7fffffff)) == 0x7fff);
  CHECK(float_to_bf16(std::numeric_limits<float>::quiet_NaN()) == 0x7fc0);
  CHECK(bits(bf16_to_float(0x7f81)) == 0x7fc10000u);  // signalling bf16 NaN comes back quiet, payload kept
}

TEST_CASE("bulk conversions equal the scalar ones, bit for bit, at every length and offset") {
  const std::string path = core::fp16_bulk_path();
  MESSAGE("fp16 bulk path: ", path);
  core::Pcg32 rng(77, 5);
  const size_t n = 1'000'003;  // not a multiple of 8: the tail is used
  std::vector<float> f(n);
  for (auto& x : f) x = from_bits(rng.next_u32());  // every kind of float, NaNs with payloads included
  const auto specials = special_floats();
  for (size_t i = 0; i < specials.size(); ++i) f[i * 997] = specials[i];
  for (size_t i = 0; i < 8192; ++i)  // fp16's range densely (random bits cover it sparsely)
    f[n - 1 - i] = std::ldexp(rng.uniform(-2, 2), static_cast<int>(rng.below(44)) - 28);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = static_cast<uint16_t>(i);  // every 16-bit pattern, ~15 times over

  auto check_all = [&](size_t offset, size_t len) {
    std::vector<uint16_t> to16(len + 1, 0xabcd), tobf(len + 1, 0xabcd);
    std::vector<float> from16(len + 1, 42.0f), frombf(len + 1, 42.0f);
    core::to_fp16(to16.data(), f.data() + offset, len);
    core::to_bf16(tobf.data(), f.data() + offset, len);
    core::from_fp16(from16.data(), h.data() + offset, len);
    core::from_bf16(frombf.data(), h.data() + offset, len);
    Mismatches bad;
    for (size_t i = 0; i < len; ++i) {
      const float x = f[offset + i];
      const uint16_t y = h[offset + i];
      if (to16[i] != float_to_fp16(x)) bad.add("to_fp16 [", i, "] of bits ", bits(x));
      if (tobf[i] != float_to_bf16(x)) bad.add("to_bf16 [", i, "] of bits ", bits(x));
      if (bits(from16[i]) != bits(fp16_to_float(y))) bad.add("from_fp16 [", i, "] of ", y);
      if (bits(frombf[i]) != bits(bf16_to_float(y))) bad.add("from_bf16 [", i, "] of ", y);
    }
    // Nothing written past the end.
    if (to16[len] != 0xabcd || tobf[len] != 0xabcd || from16[len] != 42.0f || frombf[len] != 42.0f)
      bad.add("wrote past element ", len);
    INFO("offset ", offset, " length ", len);
    CHECK(bad.count == 0);
  };
  check_all(0, n);
  for (size_t len = 0; len <= 33; ++len)
    for (size_t offset : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, n - 33 - 1}) check_all(offset, len);
}
