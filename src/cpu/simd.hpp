// Which SIMD instruction set the CPU kernels run with, chosen at run time from the CPU's features, so that one binary
// runs on AVX-512, AVX2 and older x86-64 CPUs alike (the fast kernels live in separately compiled files, each built
// with its own instruction-set flags, and are only called when the CPU has that instruction set).
//
// The choice can be lowered (never raised above what the CPU has), for tests and for comparisons:
//   - the environment variable TRAINSCOPE_CPU_SIMD=avx512|avx2|portable, read once at the first use;
//   - cpu::set_simd_level() from code (the tests run every path this way).
#pragma once
#include <string>

namespace cpu {

// The CPU's model name from /proc/cpuinfo ("AMD EPYC 9B14"), or "unknown CPU".
std::string cpu_model_name();

// Ordered: a higher level can run everything a lower one runs.
enum class SimdLevel { Portable, AVX2, AVX512 };

const char* to_string(SimdLevel level);  // "portable", "AVX2", "AVX-512"

// What this CPU supports: AVX-512 = AVX512F (with the OS saving zmm state), AVX2 = AVX2 + FMA3; else Portable.
SimdLevel cpu_simd_level();

// The level the kernels use now: cpu_simd_level(), lowered by TRAINSCOPE_CPU_SIMD or set_simd_level().
SimdLevel active_simd_level();

// Sets the level the kernels use (clamped to cpu_simd_level()) and returns the level now in force. Not meant to be
// called while kernels run on other threads (a running GEMM keeps the kernel it started with).
SimdLevel set_simd_level(SimdLevel level);

}  // namespace cpu
