// Which SIMD instruction set the CPU kernels run with, chosen at run time from the CPU's features, so that one binary
// runs on AVX-512, AVX2 and older x86-64 CPUs alike (the fast kernels live in separately compiled files, each built
// with its own instruction-set flags, and are only called when the CPU has that instruction set). On AArch64 the
// level is NEON (Advanced SIMD, which every AArch64 CPU has: the AArch64 ABIs of Linux, Windows and macOS require it).
//
// The choice can be lowered (never raised above what the CPU has), for tests and for comparisons:
//   - the environment variable TRAINSCOPE_CPU_SIMD=avx512|avx2|neon|portable, read once at the first use;
//   - cpu::set_simd_level() from code (the tests run every path this way).
#pragma once
#include <string>

namespace cpu {

// The CPU's model name from /proc/cpuinfo ("AMD EPYC 9B14"), or "unknown CPU".
std::string cpu_model_name();

// Portable runs everywhere. The x86 levels are ordered (a CPU with AVX-512 runs AVX2 too); NEON is AArch64's and
// compares with neither of them: ask simd_level_available(), not `<`, whether a CPU can run a level.
enum class SimdLevel { Portable, AVX2, AVX512, NEON };

const char* to_string(SimdLevel level);  // "portable", "AVX2", "AVX-512", "NEON"

// What this CPU supports: AVX-512 = AVX512F (with the OS saving zmm state), AVX2 = AVX2 + FMA3, NEON on AArch64;
// else Portable.
SimdLevel cpu_simd_level();

// Whether this CPU can run `level`: Portable always; an x86 level where cpu_simd_level() is that level or a higher
// x86 one; NEON where cpu_simd_level() is NEON.
bool simd_level_available(SimdLevel level);

// The level the kernels use now: cpu_simd_level(), lowered by TRAINSCOPE_CPU_SIMD or set_simd_level().
SimdLevel active_simd_level();

// Sets the level the kernels use and returns the level now in force: `level` where simd_level_available(level),
// else cpu_simd_level() (AVX-512 asked of an AVX2 CPU gives AVX2, an x86 level asked of an ARM CPU gives NEON). Not
// meant to be called while kernels run on other threads (a running GEMM keeps the kernel it started with).
SimdLevel set_simd_level(SimdLevel level);

}  // namespace cpu
