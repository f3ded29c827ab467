// How `trainscope bench` times one GEMM, shared by the bench and its OpenBLAS reference process
// (bench/openblas_gemm.cpp), so that both sides are measured the same way: warm-up calls, then samples until at
// least `repeats` were timed and `min_seconds` of wall time have passed (at most 200); the figure is the median
// sample's time per call. A sample is as many back-to-back calls as make it last kMinSampleSeconds at least (found
// during the warm-up, doubling): a GEMM of a few microseconds timed alone would mostly measure the clock, and
// reading CLOCK_THREAD_CPUTIME_ID is a system call of about a microsecond.
// Each call is timed with the wall clock (steady_clock), or with the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID): on one thread, where the calling thread does all the work, CPU time leaves out the
// moments another program had the core, so figures from a busy shared machine stay close to an idle one's.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

#include "platform/system.hpp"

namespace app {

enum class BenchClock { Wall, ThreadCpu };

inline double clock_seconds(BenchClock clock) {
  if (clock == BenchClock::Wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return platform::thread_cpu_seconds();
}

struct TimedCalls {
  double median_ms = 0;  // per call
  int calls = 0;         // timed calls (the warm-up not counted)
};

inline constexpr double kMinSampleSeconds = 200e-6;

template <typename Fn>
TimedCalls time_calls(Fn&& call, int repeats, double min_seconds, BenchClock clock = BenchClock::Wall) {
  using Clock = std::chrono::steady_clock;
  // Warm-up (page faults, packing buffers, thread wake-up), doubling the calls per sample until one lasts long enough.
  int batch = 1;
  for (;;) {
    const double t0 = clock_seconds(clock);
    for (int i = 0; i < batch; ++i) call();
    if (clock_seconds(clock) - t0 >= kMinSampleSeconds || batch >= (1 << 16)) break;
    batch *= 2;
  }
  std::vector<double> ms;
  const auto start = Clock::now();
  while (static_cast<int>(ms.size()) < repeats ||
         (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds && ms.size() < 200)) {
    const double t0 = clock_seconds(clock);
    for (int i = 0; i < batch; ++i) call();
    ms.push_back(1e3 * (clock_seconds(clock) - t0) / batch);
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), static_cast<int>(n) * batch};
}

}  // namespace app
