// core::Trainer: what every backend offers the run loop. gpu::Trainer (Vulkan) and cpu::Trainer (thread pool)
// implement it; run/ drives either without knowing which.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

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
};

}  // namespace core
