// run::BatchLoader: the host input pipeline's loader (--input host; core/input.hpp). loader_threads threads assemble
// the epoch's batches in order, each batch cut into one chunk of rows per thread, up to `prefetch` batches ahead of
// the step that uses them (0: only the batch a step is waiting for). The trainer takes each batch when its step starts
// (core::BatchSource::take), waiting if it is not ready: the wait the starving-GPU lesson shows.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/input.hpp"

namespace run {

class BatchLoader final : public core::BatchSource {
 public:
  // `train` must outlive the loader. batch >= 1; settings.loader_threads >= 1, prefetch >= 0 (core::validate).
  // Throws core::Error(InvalidArgument) when the system refuses a thread (cpu/thread_start.hpp), the started ones
  // joined.
  // delay_ms: a test-only slowdown, each batch's assembly made to take at least this long more (spread over its
  // chunks, so that threads share it), from TRAINSCOPE_LOADER_DELAY_MS (make_loader); 0 in normal use.
  BatchLoader(const core::Dataset& train, int batch, core::Precision precision, const core::InputPipeline& settings,
              uint64_t seed, double delay_ms = 0);
  ~BatchLoader() override;
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  void begin_epoch(std::span<const uint32_t> order) override;
  core::HostBatch take(size_t first) override;

 private:
  struct Slot {
    std::vector<std::byte> x;  // B x C0 elements of the storage type
    std::vector<int32_t> y;
    long batch = -1;  // the batch index (from start_) it holds or is being assembled, -1: none
    int claimed = 0, done = 0;  // chunks
    std::vector<core::LoaderSpan> spans;
  };
  void work(int thread);
  void stop_threads();  // ends and joins the loader threads
  bool allowed(long k) const;  // may batch k be assembled now (mutex_ held)
  Slot* claimable(long* batch, int* chunk);  // the first allowed batch with a chunk left (mutex_ held)
  void restart(size_t first, std::unique_lock<std::mutex>& lock);  // waits for the chunks in flight, empties slots

  const core::Dataset& train_;
  const int batch_;
  const core::Precision precision_;
  const core::InputPipeline settings_;
  const uint64_t seed_;
  const double delay_ms_;
  const int chunks_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<uint32_t> order_;
  std::vector<Slot> slots_;  // prefetch + 1: batch k in slot k % size
  size_t start_ = 0;         // the position of batch 0 in the order
  long next_ = 0;            // the batch the trainer takes next
  bool requested_ = false;   // the trainer is waiting for batch next_
  int busy_ = 0;             // chunks being assembled
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

// The loader of `cfg.input` for a trainer of `batch` samples in `precision` on `data`'s training set, or null for
// device-resident input. The test-only slowdown comes from TRAINSCOPE_LOADER_DELAY_MS (milliseconds per batch, 0..10000).
std::unique_ptr<core::BatchSource> make_loader(const core::TrainConfig& cfg, const core::DataSplit& data);

}  // namespace run
