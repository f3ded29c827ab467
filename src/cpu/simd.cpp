// Run-time choice of the SIMD level (see simd.hpp).
#include "cpu/simd.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "platform/system.hpp"

namespace cpu {
namespace {

SimdLevel detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // libgcc's checks include the OS's support (XGETBV) for the ymm / zmm register state.
  if (__builtin_cpu_supports("avx512f")) return SimdLevel::AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::AVX2;
#elif defined(__aarch64__) && defined(__ARM_NEON)
  return SimdLevel::NEON;  // Advanced SIMD is part of every AArch64 CPU these ABIs run on (simd.hpp)
#endif
  return SimdLevel::Portable;
}

SimdLevel from_environment(SimdLevel supported) {
  const char* env = std::getenv("TRAINSCOPE_CPU_SIMD");
  if (env == nullptr || *env == '\0') return supported;
  const std::string v = env;
  SimdLevel want = supported;
  if (v == "avx512" || v == "AVX-512" || v == "avx-512") want = SimdLevel::AVX512;
  else if (v == "avx2" || v == "AVX2") want = SimdLevel::AVX2;
  else if (v == "neon" || v == "NEON") want = SimdLevel::NEON;
  else if (v == "portable") want = SimdLevel::Portable;
  else {
    std::fprintf(stderr, "trainscope: warning: TRAINSCOPE_CPU_SIMD=%s not understood (avx512, avx2, neon, portable); "
                 "using %s\n", env, to_string(supported));
    return supported;
  }
  if (!simd_level_available(want)) {
    std::fprintf(stderr, "trainscope: warning: TRAINSCOPE_CPU_SIMD=%s: this CPU has only %s; using it\n", env,
                 to_string(supported));
    return supported;
  }
  return want;
}

std::atomic<int>& active() {
  static std::atomic<int> level{static_cast<int>(from_environment(cpu_simd_level()))};
  return level;
}

}  // namespace

std::string cpu_model_name() {
  const std::string name = platform::cpu_model_name();
  return name.empty() ? "unknown CPU" : name;
}

const char* to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::AVX512: return "AVX-512";
    case SimdLevel::AVX2: return "AVX2";
    case SimdLevel::NEON: return "NEON";
    case SimdLevel::Portable: break;
  }
  return "portable";
}

SimdLevel cpu_simd_level() {
  static const SimdLevel level = detect();
  return level;
}

bool simd_level_available(SimdLevel level) {
  const SimdLevel cpu = cpu_simd_level();
  switch (level) {
    case SimdLevel::Portable: return true;
    case SimdLevel::AVX2: return cpu == SimdLevel::AVX2 || cpu == SimdLevel::AVX512;
    case SimdLevel::AVX512: return cpu == SimdLevel::AVX512;
    case SimdLevel::NEON: return cpu == SimdLevel::NEON;
  }
  return false;
}

SimdLevel active_simd_level() { return static_cast<SimdLevel>(active().load(std::memory_order_relaxed)); }

SimdLevel set_simd_level(SimdLevel level) {
  if (!simd_level_available(level)) level = cpu_simd_level();
  active().store(static_cast<int>(level), std::memory_order_relaxed);
  return level;
}

}  // namespace cpu
