// The FMA-peak probe (see fma_probe.hpp): timing and threads. The loops themselves are in the files of each SIMD
// level (simd_kernels.inc, compiled into gemm_avx512.cpp, gemm_avx2.cpp and gemm_neon.cpp), run only where the CPU
// has the level.
#include "cpu/fma_probe.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>


#include "core/measure.hpp"
#include "cpu/gemm_micro.hpp"
#include "platform/system.hpp"

namespace cpu {
namespace {

using Loop = SimdFmaLoop;

Loop loop_for(SimdLevel level) {
  const SimdFmaLoop* loop = level == SimdLevel::AVX512 ? avx512_fma_loop()
                            : level == SimdLevel::AVX2 ? avx2_fma_loop()
                            : level == SimdLevel::NEON ? neon_fma_loop()
                                                       : nullptr;
  return loop ? *loop : Loop{nullptr, 0, 0, ""};
}

using platform::thread_cpu_seconds;

// `iterations` on each of `threads` threads started together; returns each thread's CPU seconds.
std::vector<double> timed_run(const Loop& loop, int threads, int64_t iterations) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> seconds(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  std::atomic<float> sink{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const double start = thread_cpu_seconds();
      const float r = loop.run(iterations);
      seconds[static_cast<size_t>(t)] = std::max(1e-9, thread_cpu_seconds() - start);
      sink.store(r, std::memory_order_relaxed);
    });
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return seconds;
}

}  // namespace

FmaPeak measure_fma_peak(SimdLevel level, int threads, int repeats, double seconds_per_repeat) {
  const Loop loop = loop_for(level);
  if (loop.run == nullptr || !simd_level_available(level))
    throw std::invalid_argument(std::string("FMA probe: this CPU cannot run ") + to_string(level));
  threads = std::max(1, threads);
  repeats = std::max(1, repeats);
  // Calibrate the iteration count on one thread so that a repeat lasts about seconds_per_repeat.
  int64_t iterations = 1 << 14;  // not long: 32 bits on Windows
  for (;;) {
    const double s = timed_run(loop, 1, iterations)[0];
    if (s >= seconds_per_repeat / 4 || iterations > (int64_t{1} << 40)) {
      iterations = std::max<int64_t>(
          1, static_cast<int64_t>(static_cast<double>(iterations) * seconds_per_repeat / std::max(s, 1e-9)));
      break;
    }
    iterations *= 4;
  }
  FmaPeak peak;
  peak.level = level;
  peak.width = loop.width;
  peak.lanes = loop.lanes;
  peak.chains = loop.chains;
  peak.threads = threads;
  const double flops_per_thread = 2.0 * static_cast<double>(iterations) * loop.chains * loop.lanes;
  for (int r = 0; r < repeats; ++r) {
    double gflops = 0;
    for (double s : timed_run(loop, threads, iterations)) gflops += flops_per_thread / s / 1e9;
    peak.samples.push_back(gflops);
  }
  peak.gflops = core::peak_of_repeats(peak.samples, true);
  return peak;
}

std::vector<FmaPeak> probe_fma_peaks(int threads, int repeats) {
  std::vector<FmaPeak> peaks;
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2, SimdLevel::NEON}) {
    if (!simd_level_available(level)) continue;
    peaks.push_back(measure_fma_peak(level, 1, repeats));
    if (threads > 1) peaks.push_back(measure_fma_peak(level, threads, repeats));
  }
  return peaks;
}

}  // namespace cpu
