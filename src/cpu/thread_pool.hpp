// cpu::ThreadPool: a fixed set of worker threads that run parallel_for ranges; the calling thread takes part.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cpu {

class ThreadPool {
 public:
  // threads = total threads including the caller (>= 1). 0: std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // parallel_for calls so far that handed work to the workers and waited for them (one that runs inline, with one
  // thread or a single chunk, is not counted): the CPU's "submissions" (core::ExecutionCounts).
  unsigned long dispatches() const { return generation_.load(std::memory_order_relaxed); }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), chunks of at least `grain` items, spread over all
  // threads; returns when every chunk is done. Not re-entrant (fn must not call parallel_for).
  void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn);

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t, size_t)>* job_ = nullptr;
  size_t job_n_ = 0, chunk_ = 0, next_chunk_ = 0, chunks_ = 0;
  std::atomic<size_t> finished_{0};          // written under mutex_; read without it while spinning
  std::atomic<unsigned long> generation_{0};  // likewise: one more per parallel_for
  bool stop_ = false;
};

}  // namespace cpu
