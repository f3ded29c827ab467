// cpu::ThreadPool: parallel_for covers every index once in chunks of at least its grain, survives thousands of tiny
// jobs and a slow chunk; and its span recording (the step timeline's per-thread tracks): when on, each thread that
// took a chunk has a span covering its chunks on the steady clock; when off, none; take_spans starts anew. A thread
// the system refuses (under a pids limit) is a clean error, not std::terminate. cpu::per_thread's objects (the kernels'
// per-thread buffers) end with their thread, intact: a thread_local object did not on Windows (platform/threads.hpp).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "cpu/per_thread.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/thread_start.hpp"

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

TEST_CASE("thread pool: parallel_for covers every index exactly once, in chunks of at least grain") {
  for (int threads : {1, 2, 3, 4}) {
    cpu::ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (size_t n : {0, 1, 2, 7, 33, 1000, 1001}) {
      for (size_t grain : {1, 2, 7, 64, 5000}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(grain);
        std::vector<std::atomic<int>> hits(n);
        std::mutex mutex;
        std::vector<std::pair<size_t, size_t>> chunks;
        pool.parallel_for(n, grain, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) hits[i]++;
          std::lock_guard lock(mutex);
          chunks.emplace_back(b, e);
        });
        size_t wrong = 0, small = 0;
        for (auto& h : hits) wrong += h.load() != 1;
        for (auto [b, e] : chunks) small += (e - b < grain && e != n) || e <= b;
        CHECK(wrong == 0);
        CHECK(small == 0);
      }
    }
  }
  CHECK(cpu::ThreadPool(0).size() == static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST_CASE("thread pool: thousands of back-to-back small jobs neither hang nor lose work") {
  cpu::ThreadPool pool(3);
  std::atomic<long> total{0};
  for (int k = 0; k < 3000; ++k)
    pool.parallel_for(5, 1, [&](size_t b, size_t e) { total += static_cast<long>(e - b); });
  CHECK(total.load() == 15000);
}

TEST_CASE("thread pool: a worker chunk that outlasts the polling window still wakes the caller") {
  // The caller's own chunk waits until a worker has started the other one, which then sleeps 20 ms: far past the
  // pool's polling window, so only the condition variable can wake the caller. Run on a detached thread with a
  // timeout, so that a lost wake-up fails the test instead of hanging it (the pool is leaked then).
  auto* pool = new cpu::ThreadPool(2);
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  std::thread([pool, done] {
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> worker_started{false};
    pool->parallel_for(2, 1, [&](size_t, size_t) {
      if (std::this_thread::get_id() == caller) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!worker_started && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
      } else {
        worker_started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    done->set_value();
  }).detach();
  const bool returned = finished.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  CHECK(returned);
  if (returned) delete pool;
}

TEST_CASE("thread pool: a thread the system refuses is an error naming it, the threads started before are joined") {
  // Before: std::system_error unwound past the joinable workers already started: std::terminate.
  for (long k : {0L, 1L, 2L}) {
    CAPTURE(k);
    cpu::fail_thread_start_after(k);  // k workers start, the next is refused
    std::string error;
    try {
      cpu::ThreadPool pool(4);
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::InvalidArgument);
      error = e.what();
    }
    CAPTURE(error);
    CHECK(error.rfind("cannot start CPU thread " + std::to_string(k + 2) + " of 4: the system refused another thread", 0) ==
          0);
    CHECK(error.find("use at most " + std::to_string(k + 1) + " CPU threads (--threads)") != std::string::npos);
  }
  // Disarmed after its one refusal: a pool starts and works again.
  cpu::ThreadPool pool(4);
  std::atomic<size_t> sum{0};
  pool.parallel_for(100, 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum == 4950);
}

namespace {
// Destroyed on freed memory (a thread_local object under mingw-w64, platform/threads.hpp), its destructor's own
// allocation of its size would most likely be that memory, and its values and canary would read changed (measured
// under wine: 0 of 8 intact as a thread_local, 8 of 8 through per_thread).
struct EndProbe {
  static inline std::atomic<int> destroyed{0}, intact{0};
  std::vector<int> values;
  unsigned char canary[4096];
  EndProbe() { std::memset(canary, 0xA5, sizeof canary); }
  ~EndProbe() {
    ++destroyed;
    const auto reuse = std::make_unique<unsigned char[]>(sizeof(EndProbe) + 16);
    std::memset(reuse.get(), 0x5A, sizeof(EndProbe) + 16);
    bool same = values == std::vector<int>{1, 2, 3, 4};
    for (const unsigned char c : canary) same = same && c == 0xA5;
    if (same) ++intact;
  }
};
}  // namespace

TEST_CASE("per_thread: one object per thread, kept while the thread runs, destroyed once and intact when it ends") {
  EndProbe::destroyed = 0;
  EndProbe::intact = 0;
  constexpr int kThreads = 8;
  std::atomic<int> same_object{0};
  for (int i = 0; i < kThreads; ++i) {
    std::thread t([&same_object] {
      thread_local EndProbe* slot = nullptr;
      EndProbe& probe = cpu::per_thread(slot);
      probe.values = {1, 2, 3, 4};
      if (&cpu::per_thread(slot) == &probe) ++same_object;
    });
    t.join();
  }
  CHECK(same_object == kThreads);
  CHECK(EndProbe::destroyed == kThreads);
  CHECK(EndProbe::intact == kThreads);
  // A pool's workers too: each worker's object is freed when the pool joins it (the calling thread's at exit).
  EndProbe::destroyed = 0;
  EndProbe::intact = 0;
  std::mutex mutex;
  std::set<std::thread::id> workers;  // the workers that took a chunk (under load maybe none: then none to free)
  const auto caller = std::this_thread::get_id();
  {
    cpu::ThreadPool pool(3);
    pool.parallel_for(64, 1, [&](size_t, size_t) {
      thread_local EndProbe* slot = nullptr;
      cpu::per_thread(slot).values = {1, 2, 3, 4};
      if (std::this_thread::get_id() != caller) {
        std::lock_guard lock(mutex);
        workers.insert(std::this_thread::get_id());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    CHECK(EndProbe::destroyed == 0);
  }
  CHECK(EndProbe::destroyed == static_cast<int>(workers.size()));
  CHECK(EndProbe::intact == static_cast<int>(workers.size()));
}
