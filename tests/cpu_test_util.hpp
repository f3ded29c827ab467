// What the CPU kernel tests share (test_cpu_gemm, test_cpu_conv, test_cpu_attention, test_cpu_layernorm): seeded
// random inputs, the SIMD levels this CPU can run, a guard that restores the detected level when a test case ends,
// and the error of an fp32 result against a double reference.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "cpu/simd.hpp"

namespace test {

// n values uniform in [-1, 1), from a Pcg32 seeded with `seed`.
inline std::vector<float> random_floats(size_t n, uint64_t seed) {
  core::Pcg32 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

// The largest |got - want| over the elements, relative to the largest |want| (at least 1): an fp32 result against
// its double reference. Sizes must agree (else infinity, which fails any bound).
inline double worst_relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double err = 0, scale = 1;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

// The levels this CPU can run, lowest first.
inline std::vector<cpu::SimdLevel> runnable_levels() {
  std::vector<cpu::SimdLevel> levels{cpu::SimdLevel::Portable};
  for (const cpu::SimdLevel level : {cpu::SimdLevel::AVX2, cpu::SimdLevel::AVX512, cpu::SimdLevel::NEON})
    if (cpu::simd_level_available(level)) levels.push_back(level);
  return levels;
}

// Restores the detected level when a test case ends, whatever it forced.
struct LevelGuard {
  cpu::SimdLevel saved = cpu::active_simd_level();
  ~LevelGuard() { cpu::set_simd_level(saved); }
};

}  // namespace test
