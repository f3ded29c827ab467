// The CPU's measured peaks for `trainscope peaks` and the rooflines: STREAM copy and triad memory bandwidth on the
// kernels' own ThreadPool (McCalpin, "Memory bandwidth and machine balance in current high performance computers",
// IEEE TCCA newsletter 1995; www.cs.virginia.edu/stream), and the FMA peak (cpu/fma_probe.hpp) at the SIMD width the
// kernels use and at every other width the CPU has, each on 1 and on N threads.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/peaks.hpp"
#include "cpu/simd.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {

enum class StreamKernel {
  Copy,   // c[i] = a[i]           : 2 x 8 bytes per element (one read, one write)
  Triad,  // a[i] = b[i] + s * c[i]: 3 x 8 bytes per element
};

struct StreamPeak {
  StreamKernel kernel = StreamKernel::Copy;
  int threads = 0;
  size_t array_bytes = 0;       // of each array (doubles, as STREAM)
  double gbps = 0;              // the best pass, GB/s (1e9 bytes/s), bytes counted as STREAM counts them (above)
  std::vector<double> samples;  // each repeat's GB/s
};

// The size of each STREAM array: 4 x the last-level cache the CPU reports (STREAM's rule, so that no array fits in
// any cache), at least 64 MiB and at most 128 MiB (a server CPU reports its whole socket's L3, of which one core
// complex reaches only its own part: on the development machine, an EPYC reporting 508 MiB of L3, the figures are
// flat from 128 MiB arrays on and cached below 64 MiB; docs/benchmarks.md), and at most a 16th of the memory.
// `trainscope peaks --stream-mib N` sets another size.
size_t stream_array_bytes();

// STREAM's three arrays a, b, c of `bytes` each (doubles), allocated uninitialised and first touched by `pool`'s
// threads, so that the pages are where the threads run, as in STREAM. Throws std::bad_alloc.
struct StreamArrays {
  StreamArrays(size_t bytes, ThreadPool& pool);
  size_t n = 0;  // elements of each array
  std::unique_ptr<double[]> a, b, c;
};

// Times `kernel` over `arrays` on `pool` (all its threads, dynamic chunks as the kernels use), `repeats` times after
// one untimed pass; the wall-clock time of each pass; the best (core::peak_of_repeats).
StreamPeak measure_stream(StreamKernel kernel, ThreadPool& pool, StreamArrays& arrays, int repeats = 5);

// Every CPU figure, on 1 thread and on all hardware threads (N): stream_copy_1t/_nt, stream_triad_1t/_nt (GB/s),
// fma_<level>_1t/_nt for each SIMD level the CPU has (GFLOP/s; level "avx512" or "avx2"), each the best of `repeats`
// (at least 5). On a 1-thread machine the _nt figures are the _1t ones. device: cpu_description(N); key:
// cpu_peaks_key(). stream_bytes: the size of each STREAM array (0: stream_array_bytes()).
core::DevicePeaks measure_cpu_peaks(int repeats = 5, const core::PeakProgress& progress = {}, size_t stream_bytes = 0);

// The id of `level`'s FMA figure on one thread ("fma_avx2_1t") or on all hardware threads ("fma_avx512_nt").
std::string fma_peak_id(SimdLevel level, bool all_threads);

// The cache key of this CPU: core::cpu_peaks_key(cpu_model_name(), hardware threads).
std::string cpu_peaks_key();
// Cached peaks of this CPU measured while the kernels ran another SIMD level (TRAINSCOPE_CPU_SIMD, set_simd_level):
// the kernels' level and the device's description made this process's, so that the roofline takes the FMA figure of
// the level that runs (every level the CPU has is measured and cached) and names it.
void use_active_level(core::DevicePeaks& peaks);

}  // namespace cpu
