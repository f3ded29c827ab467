// run::BatchLoader (run/loader.hpp): loader threads, the prefetch window and the hand-over of batches to a trainer.
#include "run/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/options.hpp"
#include "cpu/thread_start.hpp"

namespace run {

BatchLoader::BatchLoader(const core::Dataset& train, int batch, core::Precision precision,
                         const core::InputPipeline& settings, uint64_t seed, double delay_ms)
    : train_(train),
      batch_(batch),
      precision_(precision),
      settings_(settings),
      seed_(seed),
      delay_ms_(delay_ms),
      chunks_(std::clamp(settings.loader_threads, 1, std::max(1, batch))) {
  if (batch < 1 || settings.loader_threads < 1 || settings.prefetch < 0)
    throw core::Error(core::ErrorKind::Internal, "BatchLoader: batch, threads or prefetch out of range");
  slots_.resize(static_cast<size_t>(settings.prefetch) + 1);
  const size_t x_bytes = static_cast<size_t>(batch) * static_cast<size_t>(train.features) *
                         core::storage_bytes(precision);
  for (Slot& s : slots_) {
    s.x.resize(x_bytes);
    s.y.resize(static_cast<size_t>(batch));
  }
  try {
    for (int t = 0; t < settings.loader_threads; ++t)
      threads_.push_back(cpu::start_thread(
          [this, t] { work(t); }, fmt::format("loader thread {} of {}", t + 1, settings.loader_threads),
          t == 0 ? std::string("use --input device") : fmt::format("use at most --loader-threads {}", t)));
  } catch (...) {
    stop_threads();  // the destructor does not run for a constructor that throws
    throw;
  }
}

BatchLoader::~BatchLoader() { stop_threads(); }

void BatchLoader::stop_threads() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool BatchLoader::allowed(long k) const {
  if (k < next_ || start_ + static_cast<size_t>(k + 1) * static_cast<size_t>(batch_) > order_.size()) return false;
  // prefetch batches ahead of the one the trainer takes next; with prefetch 0, that one only once it asks for it.
  return k < next_ + std::max<long>(settings_.prefetch, requested_ ? 1 : 0);
}

BatchLoader::Slot* BatchLoader::claimable(long* batch, int* chunk) {
  for (long k = next_; allowed(k); ++k) {
    Slot& s = slots_[static_cast<size_t>(k) % slots_.size()];
    // A slot's earlier batch (k - slots) is released: the trainer took a later one, or is asking for k itself.
    if (s.batch != k) s.batch = k, s.claimed = s.done = 0, s.spans.clear();
    if (s.claimed < chunks_) {
      *batch = k;
      *chunk = s.claimed++;
      return &s;
    }
  }
  return nullptr;
}

void BatchLoader::work(int thread) {
  std::unique_lock lock(mutex_);
  for (;;) {
    long k = -1;
    int chunk = 0;
    Slot* slot = nullptr;
    cv_.wait(lock, [&] { return stop_ || (!error_ && (slot = claimable(&k, &chunk)) != nullptr); });
    if (stop_) return;
    ++busy_;
    const size_t first = start_ + static_cast<size_t>(k) * static_cast<size_t>(batch_);
    const size_t B = static_cast<size_t>(batch_);
    const size_t r0 = B * static_cast<size_t>(chunk) / static_cast<size_t>(chunks_);
    const size_t r1 = B * static_cast<size_t>(chunk + 1) / static_cast<size_t>(chunks_);
    lock.unlock();
    const double start_s = core::monotonic_seconds();
    std::exception_ptr failed;
    try {
      core::assemble_rows(train_, order_, first, r0, r1, settings_.augment, seed_, precision_, slot->x.data(),
                          slot->y.data());
      if (delay_ms_ > 0)  // the test-only slowdown: this chunk's share of the batch's delay
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(
            delay_ms_ * static_cast<double>(r1 - r0) / static_cast<double>(B)));
    } catch (...) {
      failed = std::current_exception();
    }
    const double end_s = core::monotonic_seconds();
    lock.lock();
    --busy_;
    if (failed && !error_) error_ = failed;
    if (slot->batch == k) {
      ++slot->done;
      slot->spans.push_back({thread, start_s, end_s});
    }
    cv_.notify_all();
  }
}

void BatchLoader::restart(size_t first, std::unique_lock<std::mutex>& lock) {
  // Chunks in flight write into the slots: wait for them before the slots are given to other batches.
  next_ = std::numeric_limits<long>::max() / 2;  // nothing is claimable meanwhile
  cv_.wait(lock, [&] { return busy_ == 0; });
  for (Slot& s : slots_) s.batch = -1, s.claimed = s.done = 0, s.spans.clear();
  start_ = first;
  next_ = 0;
  requested_ = false;
  error_ = nullptr;
}

void BatchLoader::begin_epoch(std::span<const uint32_t> order) {
  std::unique_lock lock(mutex_);
  restart(0, lock);
  order_.assign(order.begin(), order.end());
  cv_.notify_all();
}

core::HostBatch BatchLoader::take(size_t first) {
  std::unique_lock lock(mutex_);
  if (first + static_cast<size_t>(batch_) > order_.size())
    throw core::Error(core::ErrorKind::Internal, "BatchLoader::take: a batch past the end of the epoch's order");
  const size_t B = static_cast<size_t>(batch_);
  // Out of sequence (a trainer rebuilt mid-epoch, a skipped batch): the prefetch starts again at `first`.
  if (first < start_ || (first - start_) % B != 0 || static_cast<long>((first - start_) / B) != next_)
    restart(first, lock);
  const long k = next_;
  Slot& s = slots_[static_cast<size_t>(k) % slots_.size()];
  requested_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return error_ || (s.batch == k && s.done == chunks_); });
  requested_ = false;
  if (error_) std::rethrow_exception(error_);
  next_ = k + 1;
  cv_.notify_all();  // the window moved: the loader threads may start batch k + prefetch
  core::HostBatch out;
  out.x = s.x;
  out.y = s.y;
  out.spans = s.spans;
  return out;
}

std::unique_ptr<core::BatchSource> make_loader(const core::TrainConfig& cfg, const core::DataSplit& data) {
  if (!cfg.input.host()) return nullptr;
  double delay_ms = 0;
  if (const char* text = std::getenv("TRAINSCOPE_LOADER_DELAY_MS"); text && *text) {
    char* end = nullptr;
    delay_ms = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(delay_ms >= 0 && delay_ms <= 10000))
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("TRAINSCOPE_LOADER_DELAY_MS={}: not a delay in milliseconds from 0 to 10000; unset "
                                    "it (it is a test-only slowdown of the --input host loader)",
                                    text));
  }
  return std::make_unique<BatchLoader>(data.train, cfg.batch, cfg.precision, cfg.input, cfg.seed, delay_ms);
}

}  // namespace run
