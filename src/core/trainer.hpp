// core::Trainer: what every backend offers the run loop. gpu::Trainer (Vulkan) and cpu::Trainer (thread pool)
// implement it; run/ drives either without knowing which.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <optional>

#include "core/dataset.hpp"
#include "core/error.hpp"
#include "core/input.hpp"
#include "core/loss_scaler.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"

namespace core {

// The host's part of a step, for the step timeline: recording the command buffer, submitting it, waiting for the
// fence, reading back losses and timestamps (GPU); with --input host (both backends), waiting for the loader's batch
// and copying it into the staging memory (GPU) or the batch input (CPU).
enum class HostPhase { Record, Submit, FenceWait, ReadBack, LoaderWait, Upload };
const char* to_string(HostPhase phase);  // "record", "submit", "fence wait", "read-back", "loader wait", "upload"

// A span of host time, in seconds on the steady clock (core::monotonic_seconds(), core/metrics.hpp).
struct HostSpan {
  HostPhase phase = HostPhase::Record;
  double start_s = 0;
  double end_s = 0;
};

// When one CPU pool thread worked on one plan entry: from the start of its first chunk to the end of its last
// (cpu::ThreadPool's span recording), seconds on the steady clock. thread 0 is the calling thread.
struct ThreadSpan {
  int thread = 0;
  int entry = 0;
  double start_s = 0;
  double end_s = 0;
};

// One finished training step: its mean cross-entropy loss and the measured time of every plan entry.
struct StepRecord {
  long step = 0;                   // global step index, from 0
  float loss = 0;                  // mean over the batch
  std::vector<double> kernel_ms;   // per StepPlan entry, in ms (GPU: timestamp queries; CPU: wall clock)
  double step_ms = 0;              // whole step (GPU: first to last timestamp; CPU: wall clock)
  // fp16 (dynamic loss scaling) only: the loss scale this step's backward pass used, and whether its gradients
  // overflowed so that the optimizer update was skipped (weights and optimizer state unchanged). 0 / false otherwise.
  float loss_scale = 0;
  bool skipped = false;
  // Where the time went, for the step timeline and the trace (core/timeline.hpp); all optional (empty / 0: not
  // recorded). start_s: when the step's first kernel started, in seconds on the steady clock (GPU: its first
  // timestamp moved onto the host's clock, see gpu/trainer.cpp). kernel_start_ms: per plan entry, its start after
  // start_s (GPU: from the timestamps, so gaps between dispatches show; CPU: from the clock); empty: the kernels back
  // to back from start_s.
  double start_s = 0;
  std::vector<double> kernel_start_ms;
  std::vector<HostSpan> host;        // GPU: the host phases of this step (fence wait and read-back: of its batch);
                                     // --input host: also its loader wait and upload (both backends)
  std::vector<LoaderSpan> loader;    // --input host: when each loader thread assembled this step's batch
  std::vector<ThreadSpan> threads;   // CPU: per pool thread and plan entry
};

// What a trainer's training steps cost the host, counted since its construction (evaluation, parameters() and
// state export/import not included): the teaching toggles change these (tests/test_execution_toggles.cpp).
//   GPU: kernels = compute dispatches recorded; submits = vkQueueSubmit calls carrying command buffers; host_waits =
//        fence waits (a read-back of finished steps, or one per kernel with --submit-per-kernel).
//   CPU: kernels = kernel calls; submits = hand-offs of work to the thread pool's workers (a parallel_for that wakes
//        them); host_waits = the same hand-offs, since the training thread waits for each one to finish.
struct ExecutionCounts {
  long steps = 0;
  long kernels = 0;
  long submits = 0;
  long host_waits = 0;
};

struct EvalResult {
  double loss = 0;      // mean cross-entropy over the test set (a token dataset's: over the positions that count)
  double accuracy = 0;  // fraction of argmax(logits) == label (a task's token dataset: of the sequences whose every
                        // position that counts is predicted right, the sequence accuracy; text: of the positions)
};

class Trainer;
// Greedy decoding with a transformer's trainer: `rows` sequences of `positions` token ids (x, as predict() takes them)
// keep their first `prompt` tokens, and each later token is the one the model predicts after the tokens before it
// (the first maximum of its logits), one position at a time. The model is causal, so the tokens after a position do
// not change its prediction: each step predicts the sequences whole and sets position p + 1 from the prediction at p.
// Returns rows x positions ids; empty when the trainer cannot predict. positions - prompt calls of predict().
std::vector<int32_t> generate_greedy(Trainer& trainer, std::vector<float> x, int rows, int positions, int prompt);

// The evaluation's result from the per-row losses and correct flags that softmax_xent_forward_backward wrote for the
// whole test set (test.count rows, or test.count x T positions of a token dataset, whose rows that do not count hold
// 0 loss and 0 correct). Both trainers call it.
EvalResult evaluation_result(const Dataset& test, std::span<const float> losses, std::span<const int32_t> correct);

// Everything a training run needs to continue in another trainer (another batch size, thread count, backend):
// the flat parameters, the optimizer state in the same layout, and the step counters.
struct TrainerState {
  Optimizer optimizer = Optimizer::AdamW;
  std::vector<float> params;   // ModelShape::param_count floats
  std::vector<float> state1;   // AdamW m, or the SGD momentum buffer (param_count floats)
  std::vector<float> state2;   // AdamW v (param_count floats); empty for SGD
  long steps = 0;              // training steps taken (the next StepRecord::step)
  long optimizer_steps = 0;    // optimizer updates taken with this state (AdamW's t of the next update is this + 1)
  // The fp16 loss scaler's state, when the exporting trainer ran fp16; an fp16 trainer importing a state without one
  // starts from TrainConfig::loss_scale_init (as GradScaler does).
  std::optional<LossScalerState> loss_scaler;
};

class Trainer {
 public:
  virtual ~Trainer() = default;

  virtual const char* backend() const = 0;          // "gpu" | "cpu"
  virtual std::string device_name() const = 0;      // e.g. "llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan on the CPU]"
  virtual const StepPlan& plan() const = 0;

  // The sample order of this epoch (a permutation of the training set's indices).
  virtual void begin_epoch(std::span<const uint32_t> order) = 0;

  // Queue one training step on samples order[first, first + plan().batch). The GPU may not have run it yet.
  virtual void step(size_t first) = 0;

  // Wait for every queued step and return their records in order (empty if none were queued).
  virtual std::vector<StepRecord> flush() = 0;

  // Test loss and accuracy on the test set given at construction (flushes first).
  virtual EvalResult evaluate() = 0;

  // The flat fp32 parameters (ModelShape layout), read back from the device where needed (flushes first).
  virtual std::vector<float> parameters() = 0;

  // The whole training state (flushes first), and its import into a fresh trainer of the same model shape.
  // If the state's optimizer differs from this trainer's, only the parameters and steps are taken: the optimizer
  // starts fresh (zero moments, optimizer_steps 0). Throws core::Error(Internal) on a size mismatch.
  virtual TrainerState export_state() = 0;
  virtual void import_state(const TrainerState& state) = 0;

  // Takes effect from the next step (queued steps keep the old rate). lr > 0.
  virtual void set_learning_rate(float lr) = 0;
  // The learning rate the next step uses (the config's, or the last set_learning_rate()).
  virtual float learning_rate() const = 0;

  // The bytes this trainer holds now, by category (core::MemoryUsage): the sum over its core::TensorLayout (less the
  // dataset where it reads the caller's), and the CPU's fp32 scratch of 16-bit kernels. Handles that are not data
  // (pipelines, descriptor and query pools, command buffers) and short-lived copies (staging buffers, predict()'s
  // points, the bandwidth measurement's 2 x 64 MiB) are not counted. Fixed from construction: a change of batch size,
  // optimizer or precision makes a new trainer.
  virtual MemoryUsage memory_usage() const = 0;

  // The same allocations as memory_usage() with every 16-bit tensor counted at 4 bytes per element and no separate
  // master weights: what this trainer would hold for the same model in fp32 (the memory panel's comparison).
  // Equal to memory_usage() in fp32.
  virtual MemoryUsage memory_usage_fp32() const = 0;

  // Empty when this trainer's device can run `precision`, else why not (e.g. "no 16-bit storage buffers
  // (storageBuffer16BitAccess)"). The dashboard disables what is unsupported, with the reason.
  virtual std::string unsupported_reason(Precision precision) const = 0;

  // The class the current weights predict for each of `count` inputs (x: count x features, row-major): the forward
  // kernels of the plan on this backend's device, batch by batch, then the argmax kernel (the first maximum).
  // For the decision boundary (core/boundary.hpp); flushes first. A trainer that cannot returns an empty vector.
  // A transformer: x holds count sequences of T token ids (as floats), and the result a class per position
  // (count x T): the token each position predicts next.
  // Throws core::Error(Internal) when x.size() != count x features.
  virtual std::vector<int32_t> predict(std::span<const float> x, size_t count) {
    (void)x, (void)count;
    return {};
  }

  // --input host (TrainConfig::input): the loader each step takes its batch from, owned by the trainer from here on.
  // A trainer built for host input throws core::Error(Internal) from step() until it has one; one built for device
  // input throws core::Error(Internal) here.
  virtual void set_batch_source(std::unique_ptr<BatchSource> source) {
    (void)source;
    throw Error(ErrorKind::Internal, "this trainer takes no host batches");
  }

  // The host's cost of the training steps so far (see ExecutionCounts); a trainer that does not count returns zeros.
  virtual ExecutionCounts execution_counts() const { return {}; }
};

}  // namespace core
