// The input pipeline (issue 24): where a training step's batch comes from. By default the dataset is kept whole on
// the device and each batch is gathered there by the gather_batch kernel (the best case: nothing crosses to the GPU
// during training). With --input host, each batch is assembled on the CPU from the dataset in host memory by loader
// threads (optionally augmented), some batches ahead, and uploaded to the GPU through staging, as a PyTorch
// DataLoader feeds a GPU: the setting that shows why a GPU starves when its loader is slow, and the standard fixes
// (loader workers, prefetching, pinned memory).
// This header: the settings, the batch a loader hands a trainer, the loader's interface (implemented with threads in
// run/loader.hpp), and the assembly of a batch's rows (deterministic: every loader setting gives the same bytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/model.hpp"

namespace core {

enum class InputSource { Device, Host };
const char* to_string(InputSource s);  // "device", "host"

struct InputPipeline {
  InputSource source = InputSource::Device;
  // Host only: random crop with zero padding (kAugmentPadding pixels each side) and horizontal flip (p = 0.5), as
  // torchvision's RandomCrop(padding=4) + RandomHorizontalFlip for Fashion-MNIST / CIFAR; needs square images.
  bool augment = false;
  int loader_threads = 1;  // host: threads assembling batches (PyTorch's num_workers), 1..64
  int prefetch = 2;        // host: batches assembled ahead of the step that uses them, 0..64 (0: on demand)
  // Host, GPU: false (pinned): the batch goes through a persistently mapped host-visible staging ring and is copied
  // by the step's command buffer, asynchronously; true: as a copy from pageable memory (cudaMemcpy from a malloc'd
  // buffer, CUDA Runtime API "API synchronization behavior"): the queue is drained first, and the batch goes through
  // a fresh staging buffer made for this one step.
  bool pageable = false;
  bool host() const { return source == InputSource::Host; }
  bool operator==(const InputPipeline&) const = default;
};
// "device-resident", "host, 1 loader thread, prefetch 2, pinned", "host, augment, 4 loader threads, prefetch 0,
// pageable": the setting in words, for tables, reports and markers.
std::string to_string(const InputPipeline& p);

inline constexpr int kAugmentPadding = 4;  // pixels of zeros around the image before the random crop

// Why `data` cannot be augmented (its rows are not square single-channel images), or empty.
std::string augment_problem(const Dataset& data);

// When one loader thread worked on a batch: seconds on the steady clock (core::monotonic_seconds()).
struct LoaderSpan {
  int thread = 0;  // loader thread, from 0
  double start_s = 0, end_s = 0;
};

// One assembled batch, as a loader hands it to a trainer. x: (B, C0) in the storage type of the precision (fp32,
// or fp16 / bf16 bits: the nearest value, as gather_batch rounds); y: (B) labels. Valid until the next take().
struct HostBatch {
  std::span<const std::byte> x;
  std::span<const int32_t> y;
  std::vector<LoaderSpan> spans;  // the loader threads' work on this batch
};

// A source of host batches for --input host (run::BatchLoader). A trainer holds one (core::Trainer::
// set_batch_source) and takes each step's batch from it.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The epoch's sample order (a permutation of the training set's indices, as core::Trainer::begin_epoch). Batches
  // assembled ahead for the previous order are dropped.
  virtual void begin_epoch(std::span<const uint32_t> order) = 0;
  // The batch of positions [first, first + B) of the order; blocks until it is assembled. Taking positions out of
  // sequence (a rebuild mid-epoch) restarts the prefetch there. Throws core::Error(Internal) past the order's end.
  virtual HostBatch take(size_t first) = 0;
};

// Assembles rows [r0, r1) of the batch at position `first` of `order` into x (B x C0 elements of `precision`'s
// storage type) and y: row r is sample order[first + r] of `train`, augmented when `augment` with draws from
// core::Pcg32(seed, stream = position << 32 | sample): a pure function of (seed, position in the order, sample), so
// the same for every loader thread count, prefetch depth and backend.
void assemble_rows(const Dataset& train, std::span<const uint32_t> order, size_t first, size_t r0, size_t r1,
                   bool augment, uint64_t seed, Precision precision, std::byte* x, int32_t* y);

// Bytes of one batch as uploaded: B x C0 x the storage type's bytes, plus B int32 labels.
size_t batch_upload_bytes(long batch, long features, Precision precision);

}  // namespace core
