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
  else if (v == "portable") want = SimdLevel::Portable;
  else {
    std::fprintf(stderr, "trainscope: warning: TRAINSCOPE_CPU_SIMD=%s not understood (avx512, avx2, portable); "
                 "using %s\n", env, to_string(supported));
    return supported;
  }
  if (want > supported) {
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
    case SimdLevel::Portable: break;
  }
  return "portable";
}

SimdLevel cpu_simd_level() {
  static const SimdLevel level = detect();
  return level;
}

SimdLevel active_simd_level() { return static_cast<SimdLevel>(active().load(std::memory_order_relaxed)); }

SimdLevel set_simd_level(SimdLevel level) {
  if (level > cpu_simd_level()) level = cpu_simd_level();
  active().store(static_cast<int>(level), std::memory_order_relaxed);
  return level;
}

}  // namespace cpu
