// A CPU FMA-peak probe: the fp32 arithmetic peak of this CPU, measured (never estimated) with independent chains of
// fused multiply-adds at a given SIMD width, on 1 and on N threads, the best of repeats. `trainscope bench` sets
// its GEMM figures against it (% of peak); it is the measured peak a roofline of the CPU needs.
//
// Method: each thread runs `chains` independent accumulators acc_i = fma(acc_i, m, c) (no loads or stores: every
// instruction is an FMA) for a fixed number of iterations; with more chains than FMA latency x FMA pipes, the FMA
// units never wait. The threads are started together. GFLOP/s = the sum over the threads of iterations x chains x
// lanes x 2 / that thread's CPU time (1e9 FLOP/s; an FMA counts 2 flops). CPU time, not wall time: a thread that
// waits for a core taken by another program is not charged for it, so the figure is the CPU's and not the moment's
// load; two threads sharing one core's FMA units (SMT) still each measure their share.
#pragma once
#include <string>
#include <vector>

#include "cpu/simd.hpp"

namespace cpu {

struct FmaPeak {
  SimdLevel level = SimdLevel::Portable;  // AVX-512 (zmm, 16 floats), AVX2 (ymm, 8 floats), NEON (q, 4 floats)
  std::string width;                      // "zmm (16 x fp32)"
  int lanes = 0;                          // floats per vector
  int chains = 0;                         // independent accumulators per thread
  int threads = 0;
  double gflops = 0;                      // the best repeat (sum over the threads)
  std::vector<double> samples;            // each repeat's GFLOP/s
};

// Measures one level (which must be simd_level_available(), and not Portable) on `threads` threads, `repeats` times of
// about `seconds_per_repeat` each; returns the best. Throws std::invalid_argument for a level the CPU lacks.
FmaPeak measure_fma_peak(SimdLevel level, int threads, int repeats = 5, double seconds_per_repeat = 0.05);

// Every SIMD level this CPU has (AVX-512 and/or AVX2, or NEON), each on 1 thread and on `threads` threads (if > 1):
// the peaks at the width the GEMM uses (active_simd_level()) and at the widest the CPU has. Empty on a CPU without
// AVX2 or NEON.
std::vector<FmaPeak> probe_fma_peaks(int threads, int repeats = 5);

}  // namespace cpu
