// cpu::ThreadPool's span recording (the step timeline's per-thread tracks): when on, each thread that took a chunk
// has a span covering its chunks on the steady clock; when off, none; take_spans starts anew.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "core/metrics.hpp"
#include "cpu/thread_pool.hpp"

TEST_CASE("thread pool spans: every thread that worked has a span around its chunks; off records nothing") {
  cpu::ThreadPool pool(2);
  std::vector<cpu::ThreadPool::Span> spans;
  const auto job = [](size_t, size_t) { std::this_thread::sleep_for(std::chrono::milliseconds(3)); };

  pool.parallel_for(8, 1, job);  // not recording
  pool.take_spans(spans);
  REQUIRE(spans.size() == 2);
  for (const auto& s : spans) CHECK(s.start_s == 0);

  pool.record_spans(true);
  const double before = core::monotonic_seconds();
  pool.parallel_for(8, 1, job);  // 8 chunks of 3 ms: the sleeping caller leaves some to the worker
  const double after = core::monotonic_seconds();
  pool.take_spans(spans);
  REQUIRE(spans.size() == 2);
  int worked = 0;
  for (const auto& s : spans) {
    if (s.start_s == 0) continue;
    ++worked;
    CHECK(s.start_s >= before);
    CHECK(s.end_s <= after);
    CHECK(s.end_s - s.start_s >= 0.003);  // at least one chunk's sleep
  }
  CHECK(spans[0].start_s > 0);  // the calling thread always takes part
  CHECK(worked >= 1);
  pool.take_spans(spans);  // taken: nothing since
  for (const auto& s : spans) CHECK(s.start_s == 0);
}
