// What the CPU kernel tests share (test_cpu_gemm, test_cpu_conv): seeded random inputs, the SIMD levels this CPU can
// run, and a guard that restores the detected level when a test case ends.
#pragma once
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
