// How `trainscope bench` times one GEMM, shared by the bench and its OpenBLAS reference process
// (bench/openblas_gemm.cpp), so that both sides are measured the same way: one warm-up call, then calls until at
// least `repeats` were timed and `min_seconds` have passed (at most 200), each timed with the steady clock; the
// figure is the median call.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

namespace app {

struct TimedCalls {
  double median_ms = 0;
  int calls = 0;  // timed calls (the warm-up not counted)
};

template <typename Fn>
TimedCalls time_calls(Fn&& call, int repeats, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  call();  // warm-up: page faults, packing buffers, thread wake-up
  std::vector<double> ms;
  const auto start = Clock::now();
  while (static_cast<int>(ms.size()) < repeats ||
         (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds && ms.size() < 200)) {
    const auto t0 = Clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), static_cast<int>(n)};
}

}  // namespace app
