// How `trainscope bench` times one GEMM, shared by the bench and its OpenBLAS reference process
// (bench/openblas_gemm.cpp), so that both sides are measured the same way: one warm-up call, then calls until at
// least `repeats` were timed and `min_seconds` of wall time have passed (at most 200); the figure is the median call.
// Each call is timed with the wall clock (steady_clock), or with the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID): on one thread, where the calling thread does all the work, CPU time leaves out the
// moments another program had the core, so figures from a busy shared machine stay close to an idle one's.
#pragma once
#include <time.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace app {

enum class BenchClock { Wall, ThreadCpu };

inline double clock_seconds(BenchClock clock) {
  if (clock == BenchClock::Wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct TimedCalls {
  double median_ms = 0;
  int calls = 0;  // timed calls (the warm-up not counted)
};

template <typename Fn>
TimedCalls time_calls(Fn&& call, int repeats, double min_seconds, BenchClock clock = BenchClock::Wall) {
  using Clock = std::chrono::steady_clock;
  call();  // warm-up: page faults, packing buffers, thread wake-up
  std::vector<double> ms;
  const auto start = Clock::now();
  while (static_cast<int>(ms.size()) < repeats ||
         (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds && ms.size() < 200)) {
    const double t0 = clock_seconds(clock);
    call();
    ms.push_back(1e3 * (clock_seconds(clock) - t0));
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), static_cast<int>(n)};
}

}  // namespace app
