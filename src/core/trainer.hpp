// core::Trainer: what every backend offers the run loop. gpu::Trainer (Vulkan) and cpu::Trainer (thread pool)
// implement it; run/ drives either without knowing which.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/step_plan.hpp"

namespace core {

// One finished training step: its mean cross-entropy loss and the measured time of every plan entry.
struct StepRecord {
  long step = 0;                   // global step index, from 0
  float loss = 0;                  // mean over the batch
  std::vector<double> kernel_ms;   // per StepPlan entry, in ms (GPU: timestamp queries; CPU: wall clock)
  double step_ms = 0;              // whole step (GPU: first to last timestamp; CPU: wall clock)
};

struct EvalResult {
  double loss = 0;      // mean cross-entropy over the test set
  double accuracy = 0;  // fraction of argmax(logits) == label
};

// Everything a training run needs to continue in another trainer (another batch size, thread count, backend):
// the flat parameters, the optimizer state in the same layout, and the step counters.
struct TrainerState {
  Optimizer optimizer = Optimizer::AdamW;
  std::vector<float> params;   // ModelShape::param_count floats
  std::vector<float> state1;   // AdamW m, or the SGD momentum buffer (param_count floats)
  std::vector<float> state2;   // AdamW v (param_count floats); empty for SGD
  long steps = 0;              // training steps taken (the next StepRecord::step)
  long optimizer_steps = 0;    // optimizer updates taken with this state (AdamW's t of the next update is this + 1)
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

  // Measured peak memory bandwidth of this backend's device, in GB/s (1e9 bytes/s): the best of a few large
  // buffer copies (read + write bytes / time), timed like the kernels. The roofline's memory ceiling.
  virtual double measure_peak_bandwidth_gbps() = 0;
};

}  // namespace core
