// The activation loops of every SIMD level (cpu/activation_loops.hpp) give the portable loops' bits, element for
// element, for every activation: the level a CPU runs changes the speed, never a result. And each is the formula:
// close to the activation and its derivative computed in double (the kernels' reference, cpu/ops/op.hpp).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/model.hpp"
#include "cpu/activation_loops.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/simd.hpp"

namespace {

// Random values across the range that matters (|x| up to 12), the edges of exp_approx's range, zeros of both signs
// and a denormal; an odd count, so that every loop has a scalar tail after its vectors.
std::vector<float> inputs() {
  std::vector<float> x = {0.0f, -0.0f, 1e-40f, -1e-40f, 88.0f, -88.0f, 100.0f, -100.0f, 3.4e38f, -3.4e38f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-12.0f, 12.0f), narrow(-0.01f, 0.01f);
  for (int i = 0; i < 4001; ++i) x.push_back(i % 4 == 0 ? narrow(rng) : wide(rng));
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b, size_t& first) {
  for (first = 0; first < a.size(); ++first)
    if (std::bit_cast<uint32_t>(a[first]) != std::bit_cast<uint32_t>(b[first])) return false;
  return true;
}

}  // namespace

TEST_CASE("every SIMD level's activation loops give the portable loops' bits, and the formula's values") {
  const std::vector<float> x = inputs();
  std::vector<float> dout(x.size());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (float& v : dout) v = d(rng);
  const long n = static_cast<long>(x.size());
  const cpu::ActivationLoops& portable = cpu::portable_activation_loops();
  int levels = 0;
  for (const cpu::ActivationLoops* loops :
       {&portable, cpu::avx2_activation_loops(), cpu::avx512_activation_loops(), &cpu::activation_loops()}) {
    if (loops == nullptr) continue;  // a level this build or platform has not
    if ((loops == cpu::avx2_activation_loops() && !cpu::simd_level_available(cpu::SimdLevel::AVX2)) ||
        (loops == cpu::avx512_activation_loops() && !cpu::simd_level_available(cpu::SimdLevel::AVX512))) {
      MESSAGE("not run on this CPU: the " << loops->level << " activation loops");
      continue;
    }
    ++levels;
    for (const core::Activation act : core::kActivations) {
      CAPTURE(loops->level);
      CAPTURE(static_cast<int>(act));
      std::vector<float> want(x.size()), got(x.size()), want_grad(x.size()), got_grad(x.size());
      portable.activate(x.data(), want.data(), n, act);
      loops->activate(x.data(), got.data(), n, act);
      size_t first = 0;
      CHECK_MESSAGE(same_bits(want, got, first), "activate differs first at x = " << x[first]);
      portable.gradient(dout.data(), x.data(), want_grad.data(), n, act);
      loops->gradient(dout.data(), x.data(), got_grad.data(), n, act);
      CHECK_MESSAGE(same_bits(want_grad, got_grad, first), "gradient differs first at x = " << x[first]);
      // In place, as the epilogues run it.
      std::vector<float> in_place = x;
      loops->activate(in_place.data(), in_place.data(), n, act);
      CHECK(same_bits(want, in_place, first));
      // The formula: within a few ulps (relative 1e-5, or 1e-6 absolute near 0) of the double reference.
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::fabs(x[i]) > 80) continue;  // where exp_approx saturates (its documented range)
        const double f = cpu::ops::ref_activation(x[i], act);
        const double g = dout[i] * cpu::ops::ref_activation_derivative(x[i], act);
        REQUIRE(std::fabs(got[i] - f) <= 1e-5 * std::fabs(f) + 1e-6);
        REQUIRE(std::fabs(got_grad[i] - g) <= 1e-5 * std::fabs(g) + 1e-6);
      }
    }
  }
  CHECK(levels >= 2);  // the portable loops and the active level's, at least
}
