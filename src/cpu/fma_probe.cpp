// The FMA-peak probe (see fma_probe.hpp). The loops use intrinsics in functions with target attributes, so this file
// is compiled for the baseline instruction set and each loop only runs where the CPU has its instruction set.
#include "cpu/fma_probe.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cpu {
namespace {

using Clock = std::chrono::steady_clock;

// acc = acc * m + c converges to c / (1 - m) = 1e-3 from anywhere near: no overflow, no denormals, and the result
// is stored so that the compiler keeps every FMA.
constexpr float kMul = 0.999f, kAdd = 1e-6f;

#if defined(__x86_64__)
constexpr int kChainsZmm = 16, kChainsYmm = 12;  // 16 of 32 zmm registers; 12 of 16 ymm

[[gnu::target("avx512f,fma"), gnu::noinline]] float fma_loop_zmm(long iterations) {
  __m512 acc[kChainsZmm];
  for (int i = 0; i < kChainsZmm; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 m = _mm512_set1_ps(kMul), c = _mm512_set1_ps(kAdd);
  for (long n = 0; n < iterations; ++n)
#pragma GCC unroll 16
    for (int i = 0; i < kChainsZmm; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, c);
  __m512 sum = acc[0];
  for (int i = 1; i < kChainsZmm; ++i) sum = _mm512_add_ps(sum, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

[[gnu::target("avx2,fma"), gnu::noinline]] float fma_loop_ymm(long iterations) {
  __m256 acc[kChainsYmm];
  for (int i = 0; i < kChainsYmm; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 m = _mm256_set1_ps(kMul), c = _mm256_set1_ps(kAdd);
  for (long n = 0; n < iterations; ++n)
#pragma GCC unroll 12
    for (int i = 0; i < kChainsYmm; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, c);
  __m256 sum = acc[0];
  for (int i = 1; i < kChainsYmm; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}
#endif

struct Loop {
  float (*run)(long);
  int lanes, chains;
  const char* width;
};

Loop loop_for(SimdLevel level) {
#if defined(__x86_64__)
  if (level == SimdLevel::AVX512) return {fma_loop_zmm, 16, kChainsZmm, "zmm (16 x fp32)"};
  if (level == SimdLevel::AVX2) return {fma_loop_ymm, 8, kChainsYmm, "ymm (8 x fp32)"};
#endif
  (void)level;
  return {nullptr, 0, 0, ""};
}

// Seconds for `iterations` on each of `threads` threads started together: the slowest thread's time.
double timed_run(const Loop& loop, int threads, long iterations) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> seconds(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  std::atomic<float> sink{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const auto start = Clock::now();
      const float r = loop.run(iterations);
      seconds[static_cast<size_t>(t)] = std::chrono::duration<double>(Clock::now() - start).count();
      sink.store(r, std::memory_order_relaxed);
    });
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

}  // namespace

FmaPeak measure_fma_peak(SimdLevel level, int threads, int repeats, double seconds_per_repeat) {
  const Loop loop = loop_for(level);
  if (loop.run == nullptr || level > cpu_simd_level())
    throw std::invalid_argument(std::string("FMA probe: this CPU cannot run ") + to_string(level));
  threads = std::max(1, threads);
  repeats = std::max(1, repeats);
  // Calibrate the iteration count on one thread so that a repeat lasts about seconds_per_repeat.
  long iterations = 1 << 14;
  for (;;) {
    const double s = timed_run(loop, 1, iterations);
    if (s >= seconds_per_repeat / 4 || iterations > (1L << 40)) {
      iterations = std::max(1L, static_cast<long>(static_cast<double>(iterations) * seconds_per_repeat / std::max(s, 1e-9)));
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
  const double flops = 2.0 * static_cast<double>(iterations) * loop.chains * loop.lanes * threads;
  for (int r = 0; r < repeats; ++r) peak.samples.push_back(flops / timed_run(loop, threads, iterations) / 1e9);
  std::vector<double> sorted = peak.samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  peak.gflops = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  return peak;
}

std::vector<FmaPeak> probe_fma_peaks(int threads, int repeats) {
  std::vector<FmaPeak> peaks;
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2}) {
    if (level > cpu_simd_level()) continue;
    peaks.push_back(measure_fma_peak(level, 1, repeats));
    if (threads > 1) peaks.push_back(measure_fma_peak(level, threads, repeats));
  }
  return peaks;
}

}  // namespace cpu
