// Waiting for a state in tests of threaded code (the run layer's workers): poll a predicate instead of sleeping a
// guessed time, so that a loaded machine only makes the test slower, never flaky.
#pragma once
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

namespace test {

// How much longer waits may take in this build: TRAINSCOPE_TEST_TIME_SCALE (a whole number >= 1, default 1).
// scripts/test --sanitize and --tsan set it: instrumented code runs 5-20x slower, a loaded machine does not.
inline int time_scale() {
  const char* s = std::getenv("TRAINSCOPE_TEST_TIME_SCALE");
  const int v = s ? std::atoi(s) : 1;
  return v >= 1 ? v : 1;
}

// Polls until pred holds (every 5 ms, at most 60 s times time_scale()). Returns whether it did.
inline bool eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 12000 * time_scale(); ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace test
