// The elementwise loops of every SIMD level (cpu/elementwise_loops.hpp) give the portable loops' bits, element for
// element, for every activation: the level a CPU runs changes the speed, never a result. And each is the formula:
// close to the activation and its derivative computed in double (the kernels' reference, cpu/ops/op.hpp). The same
// for their e^x row (the softmaxes' exp_row): the portable row's bits at every level, close to std::exp; for
// AdamW's update, max pooling's rows and the forward epilogue's bias: the bits of the plain loop at every level.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/model.hpp"
#include "cpu/elementwise_loops.hpp"
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

// The levels this CPU can run (the portable loops first), with a message for each one it cannot.
std::vector<const cpu::ElementwiseLoops*> runnable_levels() {
  std::vector<const cpu::ElementwiseLoops*> runnable;
  for (const cpu::ElementwiseLoops* loops : {&cpu::portable_elementwise_loops(), cpu::avx2_elementwise_loops(),
                                            cpu::avx512_elementwise_loops(), &cpu::elementwise_loops()}) {
    if (loops == nullptr) continue;  // a level this build or platform has not
    if ((loops == cpu::avx2_elementwise_loops() && !cpu::simd_level_available(cpu::SimdLevel::AVX2)) ||
        (loops == cpu::avx512_elementwise_loops() && !cpu::simd_level_available(cpu::SimdLevel::AVX512))) {
      MESSAGE("not run on this CPU: the " << loops->level << " elementwise loops");
      continue;
    }
    runnable.push_back(loops);
  }
  return runnable;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b, size_t& first) {
  for (first = 0; first < a.size(); ++first)
    if (std::bit_cast<uint32_t>(a[first]) != std::bit_cast<uint32_t>(b[first])) return false;
  return true;
}

}  // namespace

TEST_CASE("every SIMD level's elementwise loops give the portable loops' bits, and the formula's values") {
  const std::vector<float> x = inputs();
  std::vector<float> dout(x.size());
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (float& v : dout) v = d(rng);
  const long n = static_cast<long>(x.size());
  const cpu::ElementwiseLoops& portable = cpu::portable_elementwise_loops();
  int levels = 0;
  for (const cpu::ElementwiseLoops* loops : runnable_levels()) {
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

// exp_approx's arguments: a dense sweep of [-90, 90] (past both ends of its range, -87 and 88, and through the
// arguments whose e^z is a denormal, below about -87.3), random arguments of the softmaxes' size, and the values it
// defines outside: infinities and the largest floats (it saturates). An odd count and an odd start, so that every
// loop has a scalar head or tail around its vectors.
std::vector<float> exp_arguments() {
  std::vector<float> z = {0.0f, -0.0f, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  for (int i = 0; i <= 180000; ++i) z.push_back(-90.0f + 0.001f * static_cast<float>(i));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> scores(-30.0f, 5.0f);
  for (int i = 0; i < 4001; ++i) z.push_back(scores(rng));
  return z;
}

TEST_CASE("every SIMD level's e^x row gives the portable row's bits, and e^x") {
  const std::vector<float> z = exp_arguments();
  const long n = static_cast<long>(z.size()) - 1;
  std::vector<float> want(z.size());
  cpu::portable_elementwise_loops().exp_row(z.data() + 1, want.data() + 1, n);
  int levels = 0;
  for (const cpu::ElementwiseLoops* loops : runnable_levels()) {
    ++levels;
    CAPTURE(loops->level);
    std::vector<float> got(z.size()), in_place = z;
    loops->exp_row(z.data() + 1, got.data() + 1, n);
    size_t first = 0;
    CHECK_MESSAGE(same_bits(want, got, first), "exp_row differs first at z = " << z[first]);
    loops->exp_row(in_place.data() + 1, in_place.data() + 1, n);  // in place, as the softmaxes run it
    in_place[0] = 0.0f;
    CHECK_MESSAGE(same_bits(want, in_place, first), "in place, exp_row differs first at z = " << z[first]);
  }
  CHECK(levels >= 2);  // the portable row and the active level's, at least
  for (size_t i = 1; i < z.size(); ++i) {
    CAPTURE(z[i]);
    if (z[i] >= -87.0f && z[i] <= 88.0f) {  // exp_approx's documented range: within 1.3 ulp (here 2 ulp)
      const double e = std::exp(static_cast<double>(z[i]));
      REQUIRE(std::fabs(want[i] - e) <= 2.0 * std::numeric_limits<float>::epsilon() * e);
    } else {  // saturated: a denormal or tiny value below the range, a finite ~2e38 above it
      REQUIRE(std::isfinite(want[i]));
      REQUIRE((z[i] < 0 ? want[i] < 1.7e-38f : want[i] > 1e38f));
    }
  }
  // The sweep reached the denormal results (z below about -87.3), where a level's multiply by 2^n could differ.
  CHECK(std::count_if(want.begin(), want.end(), [](float e) { return std::fpclassify(e) == FP_SUBNORMAL; }) > 100);
}

TEST_CASE("every SIMD level's AdamW update gives the bits of the plain loop, element for element") {
  // Gradients across the range (zeros, a denormal, ones whose square overflows to inf), moments of both signs;
  // 4001 random elements and the edges: an odd count, so that every loop has a scalar tail after its vectors.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> grads = {0.0f, -0.0f, 1e-40f, -1e-40f, 1e-20f, 3e19f, -3e19f, 1e30f}, params, m, v;
  while (grads.size() < 4009) grads.push_back(unit(rng) * std::pow(10.0f, 4.0f * unit(rng)));
  for (size_t i = 0; i < grads.size(); ++i) {
    params.push_back(unit(rng));
    m.push_back(i == 0 ? 0.0f : 1e-3f * unit(rng));
    v.push_back(i == 0 ? 0.0f : std::fabs(1e-6f * unit(rng)));
  }
  const cpu::AdamWCoefficients k{0.99999f, 1.3e-3f, 1.02f, 0.9f, 0.999f, 1e-8f};  // step 2 of lr 1e-3, wd 0.01
  // The plain loop: torch.optim.AdamW's update in fp32, each operation rounded once, as fast_math.hpp documents.
  std::vector<float> want_p = params, want_m = m, want_v = v;
  for (size_t i = 0; i < grads.size(); ++i) {
    const float g = grads[i];
    want_m[i] = k.b1 * want_m[i] + (1.0f - k.b1) * g;
    want_v[i] = k.b2 * want_v[i] + (1.0f - k.b2) * g * g;
    want_p[i] = want_p[i] * k.decay - k.step_size * want_m[i] / (std::sqrt(want_v[i]) * k.inv_bc2_sqrt + k.eps);
  }
  int levels = 0;
  for (const cpu::ElementwiseLoops* loops : runnable_levels()) {
    ++levels;
    CAPTURE(loops->level);
    std::vector<float> p = params, mm = m, vv = v;
    loops->adamw(p.data(), mm.data(), vv.data(), grads.data(), static_cast<long>(grads.size()), k);
    size_t first = 0;
    CHECK_MESSAGE(same_bits(want_m, mm, first), "m differs first at g = " << grads[first]);
    CHECK_MESSAGE(same_bits(want_v, vv, first), "v differs first at g = " << grads[first]);
    CHECK_MESSAGE(same_bits(want_p, p, first), "params differ first at g = " << grads[first]);
  }
  CHECK(levels >= 2);
}

TEST_CASE("every SIMD level's max pooling rows give the bits of the plain first-maximum loop") {
  // One row of 5 windows over 37 channels (an odd count: a scalar tail after the vectors), values from a small set so
  // that ties are common (the first maximum wins, +0 and -0 included), and NaNs (a NaN first stays the maximum; a
  // later one never wins). The plain loop: torch's order (0,0), (0,1), (1,0), (1,1), a strict comparison.
  const size_t OW = 5, C = 37, W = 2 * OW;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float pick[] = {-1.0f, 0.0f, -0.0f, 1.0f, 2.0f, 2.0f, 1e-40f, -3.4e38f, nan};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> which(0, 8), any(-1000, 1000);
  std::vector<float> i0(W * C), i1(W * C), g(OW * C);
  for (float& x : i0) x = pick[which(rng)];
  for (float& x : i1) x = pick[which(rng)];
  for (float& x : g) x = float(any(rng)) / 7.0f;
  std::vector<float> want_out(OW * C), want_d0(W * C), want_d1(W * C);
  for (size_t x = 0; x < OW; ++x)
    for (size_t c = 0; c < C; ++c) {
      const float v[4] = {i0[2 * x * C + c], i0[(2 * x + 1) * C + c], i1[2 * x * C + c], i1[(2 * x + 1) * C + c]};
      int at = 0;
      for (int k = 1; k < 4; ++k)
        if (v[k] > v[at]) at = k;
      want_out[x * C + c] = v[at];
      float* d[4] = {&want_d0[2 * x * C + c], &want_d0[(2 * x + 1) * C + c], &want_d1[2 * x * C + c],
                     &want_d1[(2 * x + 1) * C + c]};
      for (int k = 0; k < 4; ++k) *d[k] = k == at ? g[x * C + c] : 0.0f;
    }
  int levels = 0;
  for (const cpu::ElementwiseLoops* loops : runnable_levels()) {
    ++levels;
    CAPTURE(loops->level);
    std::vector<float> out(OW * C, -7.0f), d0(W * C, -7.0f), d1(W * C, -7.0f);
    loops->max_pool_row(out.data(), i0.data(), i1.data(), OW, C);
    loops->max_pool_gradient_row(d0.data(), d1.data(), i0.data(), i1.data(), g.data(), OW, C);
    size_t first = 0;
    CHECK_MESSAGE(same_bits(want_out, out, first), "the maximum differs first at output " << first);
    CHECK_MESSAGE(same_bits(want_d0, d0, first), "the first row's gradient differs first at " << first);
    CHECK_MESSAGE(same_bits(want_d1, d1, first), "the second row's gradient differs first at " << first);
  }
  CHECK(levels >= 2);
}

TEST_CASE("every SIMD level's bias epilogue adds the bias once, in place, then applies the activation") {
  // 3 rows of 37 values (a scalar tail after the vectors), 41 apart (the gaps must stay untouched), for every
  // activation and without one (matmul_forward's and conv2d_forward's epilogue, --unfused aside). Expected: the plain
  // float sum, then the portable activation row (checked against the formula in double above).
  const long rows = 3, n = 37, ld = 41;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> wide(-6.0f, 6.0f);
  std::vector<float> sums(static_cast<size_t>(rows * ld)), bias(static_cast<size_t>(n));
  for (float& x : sums) x = wide(rng);
  for (float& x : bias) x = wide(rng) * 1e-3f;
  sums[0] = 1e-40f, bias[0] = -1e-40f;  // a denormal sum that rounds to -0 or +0
  int levels = 0;
  for (const cpu::ElementwiseLoops* loops : runnable_levels()) {
    ++levels;
    CAPTURE(loops->level);
    for (const bool apply_act : {false, true})
      for (const core::Activation act : core::kActivations) {
        CAPTURE(apply_act);
        CAPTURE(static_cast<int>(act));
        std::vector<float> want_s = sums, want_out(sums.size(), -7.0f);
        for (long r = 0; r < rows; ++r)
          for (long i = 0; i < n; ++i) want_s[size_t(r * ld + i)] = sums[size_t(r * ld + i)] + bias[size_t(i)];
        if (apply_act)
          for (long r = 0; r < rows; ++r)
            cpu::portable_elementwise_loops().activate(want_s.data() + r * ld, want_out.data() + r * ld, n, act);
        std::vector<float> s = sums, out(sums.size(), -7.0f);
        loops->bias_activate_rows(s.data(), bias.data(), out.data(), ld, rows, n, apply_act, act);
        size_t first = 0;
        CHECK_MESSAGE(same_bits(want_s, s, first), "the sums differ first at " << first);
        CHECK_MESSAGE(same_bits(want_out, out, first), "the activations differ first at " << first);
      }
  }
  CHECK(levels >= 2);
}
