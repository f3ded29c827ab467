// cpu::ThreadPool: a fixed set of worker threads that run parallel_for ranges; the calling thread takes part. For the
// step timeline it can note, per thread, when it worked (record_spans / take_spans).
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
  // threads = total threads including the caller (>= 1). 0: std::thread::hardware_concurrency(). Throws
  // core::Error(InvalidArgument) when the system refuses a thread (cpu/thread_start.hpp), the started ones joined.
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

  // When one thread worked, in seconds on the steady clock (core::monotonic_seconds): from the start of its first
  // chunk to the end of its last chunk since the previous take_spans(). start_s == 0: it took no chunk.
  struct Span {
    double start_s = 0;
    double end_s = 0;
  };
  // While on, every chunk costs two steady-clock reads (tens of nanoseconds; a chunk is at least `grain` items).
  // Call from the calling thread, not during a parallel_for.
  void record_spans(bool on);
  // The spans since the last call, one per thread (index 0: the calling thread, 1..size()-1: the workers), and
  // starts anew. Call from the calling thread between parallel_for calls; empty spans when not recording.
  void take_spans(std::vector<Span>& out);

 private:
  void worker_loop(int index);
  void stop_workers();  // ends and joins the workers
  // Runs fn on [begin, end) as thread `index`, noting its span when recording.
  void run_chunk(const std::function<void(size_t, size_t)>& fn, size_t begin, size_t end, size_t index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t, size_t)>* job_ = nullptr;
  size_t job_n_ = 0, chunk_ = 0, next_chunk_ = 0, chunks_ = 0;
  std::atomic<size_t> finished_{0};          // written under mutex_; read without it while spinning
  std::atomic<unsigned long> generation_{0};  // likewise: one more per parallel_for
  bool stop_ = false;
  bool record_ = false;     // written by the calling thread between jobs; read by workers under mutex_
  std::vector<Span> spans_;  // one per thread; element i written only by thread i, read after the job is done
};

}  // namespace cpu
