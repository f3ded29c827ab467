// cpu::ThreadPool: each parallel_for cuts [0, n) into chunks that the workers and the calling thread take in turn
// (dynamic scheduling, so a thread slowed down by the rest of the machine, e.g. the GPU backend's thread, takes fewer
// chunks). Between jobs a worker first polls for the next one for a short while, yielding the core, and only then
// sleeps on a condition variable: inside a training step the next kernel follows within microseconds, while a
// condition-variable wake-up costs tens of microseconds.
#include "cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/metrics.hpp"
#include "cpu/thread_start.hpp"

namespace cpu {
namespace {

constexpr auto kPollTime = std::chrono::microseconds(100);

// Polls `done` until it holds or kPollTime has passed; returns whether it holds.
template <typename Pred>
bool poll_briefly(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + kPollTime;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(threads - 1));
  spans_.resize(static_cast<size_t>(threads));
  try {
    for (int i = 0; i + 1 < threads; ++i)
      workers_.push_back(start_thread([this, i] { worker_loop(i); }, fmt::format("CPU thread {} of {}", i + 2, threads),
                                      fmt::format("use at most {} CPU threads (--threads)", i + 1)));
  } catch (...) {
    stop_workers();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void ThreadPool::record_spans(bool on) {
  std::lock_guard lock(mutex_);
  record_ = on;
}

void ThreadPool::take_spans(std::vector<Span>& out) {
  out.assign(spans_.begin(), spans_.end());
  std::fill(spans_.begin(), spans_.end(), Span{});
}

void ThreadPool::run_chunk(const std::function<void(size_t, size_t)>& fn, size_t begin, size_t end, size_t index) {
  if (!record_) {
    fn(begin, end);
    return;
  }
  const double start = core::monotonic_seconds();
  fn(begin, end);
  Span& s = spans_[index];
  if (s.start_s == 0) s.start_s = start;
  s.end_s = core::monotonic_seconds();
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  const size_t threads = static_cast<size_t>(size());
  const size_t max_chunks = (n + grain - 1) / grain;
  if (threads == 1 || max_chunks == 1) {
    run_chunk(fn, 0, n, 0);
    return;
  }
  // Up to 4 chunks per thread: enough to even out unequal speeds, few enough to keep the locking cheap.
  const size_t chunks = std::min(max_chunks, threads * 4);
  const size_t chunk = std::max(grain, (n + chunks - 1) / chunks);
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    chunk_ = chunk;
    chunks_ = (n + chunk - 1) / chunk;
    next_chunk_ = 0;
    finished_ = 0;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();

  // The caller takes chunks too, then waits for the chunks still running on workers.
  std::unique_lock lock(mutex_);
  while (next_chunk_ < chunks_) {
    const size_t c = next_chunk_++;
    lock.unlock();
    run_chunk(fn, c * chunk, std::min(n, (c + 1) * chunk), 0);
    lock.lock();
    ++finished_;
  }
  const size_t total = chunks_;
  if (finished_ != total) {
    lock.unlock();
    poll_briefly([&] { return finished_.load(std::memory_order_acquire) == total; });
    lock.lock();
    done_.wait(lock, [&] { return finished_ == total; });
  }
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  unsigned long seen = 0;
  for (;;) {
    poll_briefly([&] { return generation_.load(std::memory_order_acquire) != seen; });
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    // job_ stays valid while a chunk of it is unfinished: parallel_for returns only once finished_ == chunks_.
    while (job_ != nullptr && next_chunk_ < chunks_) {
      const size_t c = next_chunk_++;
      const auto* job = job_;
      const size_t n = job_n_, chunk = chunk_;
      lock.unlock();
      run_chunk(*job, c * chunk, std::min(n, (c + 1) * chunk), static_cast<size_t>(index) + 1);
      lock.lock();
      if (++finished_ == chunks_) done_.notify_one();
    }
  }
}

}  // namespace cpu
