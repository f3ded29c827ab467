// core::integer_power (AdamW's beta^t) against exact integer arithmetic: for base = k / 2^m, k^t fits in 64 bits for
// small t, so k^t * 2^(-m t) is the exact power, and a double holds it exactly whenever k^t < 2^53. And against the C
// library's pow within one unit in the last place, for the betas trainscope uses.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <cstdint>

#include "core/power.hpp"

TEST_CASE("integer_power is exact where the power is a double, and within an ulp of std::pow elsewhere") {
  for (uint64_t k : {1u, 3u, 5u, 7u, 9u, 15u, 99u, 999u}) {
    for (int m : {1, 4, 7, 10}) {
      const double base = std::ldexp(static_cast<double>(k), -m);
      if (base > 1) continue;
      uint64_t kt = 1;
      for (uint64_t t = 0; t <= 40; ++t, kt *= k) {
        if (kt >= (uint64_t{1} << 53)) break;
        const double exact = std::ldexp(static_cast<double>(kt), -m * static_cast<int>(t));
        CHECK_MESSAGE(core::integer_power(base, t) == exact, k << "/2^" << m << " to the " << t);
      }
    }
  }
  for (double base : {0.9, 0.999, static_cast<double>(0.9f), static_cast<double>(0.999f)}) {
    for (uint64_t t = 0; t <= 5000; ++t) {
      // The reference in long double (64-bit mantissa with GCC on x86, Linux and mingw-w64 alike; elsewhere at least
      // double), rounded once: mingw-w64's double pow is itself an ulp off at times, and the two errors added
      // failed this check under wine.
      const double p = core::integer_power(base, t);
      const double ref = static_cast<double>(std::pow(static_cast<long double>(base), static_cast<long double>(t)));
      CHECK(std::abs(p - ref) <= std::nextafter(ref, 2.0) - ref);
    }
  }
  CHECK(core::integer_power(0.9, 0) == 1.0);
}
