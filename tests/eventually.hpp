// Waiting for a state in tests of threaded code (the run layer's workers): poll a predicate instead of sleeping a
// guessed time, so that a loaded machine only makes the test slower, never flaky.
#pragma once
#include <chrono>
#include <functional>
#include <thread>

namespace test {

// Polls until pred holds (every 5 ms, at most 60 s). Returns whether it did.
inline bool eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 12000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace test
