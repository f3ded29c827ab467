// core::integer_power: base^n for a whole n >= 0, correctly rounded on every system. AdamW's bias corrections need
// beta^t (1 - 0.9^t, 1 - 0.999^t); std::pow is correctly rounded in glibc but not in mingw-w64's C library, and a
// last-bit difference in beta^t made a Windows build's losses leave the Linux build's after 11 steps. Here the power
// is computed by squaring in double-double arithmetic (each value an unevaluated sum hi + lo carrying about 106
// bits; Dekker 1971, "A floating-point technique for extending the available precision", Numer. Math. 18: the exact
// product of two doubles as a sum of two, by Veltkamp's split, without relying on an FMA), and rounded to double
// once at the end. Its error, under 2^-100 relative for any n below 2^31, is far below half a unit in the last place,
// so the result is the correctly rounded one except when the exact power lies within 2^-100 of a rounding tie.
#pragma once
#include <cstdint>

namespace core {

namespace power_detail {

struct DoubleDouble {
  double hi, lo;
};

// a + b exactly as s + e (Knuth's TwoSum).
inline DoubleDouble two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// a * b exactly as p + e (Dekker's TwoProduct with Veltkamp's split into 26-bit halves).
inline DoubleDouble two_product(double a, double b) {
  auto split = [](double x) {
    const double c = 134217729.0 * x;  // 2^27 + 1
    const double hi = c - (c - x);
    return DoubleDouble{hi, x - hi};
  };
  const double p = a * b;
  const DoubleDouble as = split(a), bs = split(b);
  const double e = ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo;
  return {p, e};
}

inline DoubleDouble multiply(DoubleDouble a, DoubleDouble b) {
  DoubleDouble p = two_product(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return two_sum(p.hi, p.lo);
}

}  // namespace power_detail

// base^n for n >= 0 (1 for n = 0), for |base| <= 1 as the optimizers use it (no overflow handling beyond that).
inline double integer_power(double base, uint64_t n) {
  using namespace power_detail;
  DoubleDouble result{1.0, 0.0}, square{base, 0.0};
  for (; n > 0; n >>= 1) {
    if (n & 1) result = multiply(result, square);
    if (n > 1) square = multiply(square, square);
  }
  return result.hi + result.lo;
}

}  // namespace core
