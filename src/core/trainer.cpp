// The analytic fp32 memory figure of a model (core::fp32_reference_memory), beside the trainers' measured ones; the
// names of the host phases of the step timeline.
#include "core/trainer.hpp"

#include <algorithm>

namespace core {

const char* to_string(HostPhase phase) {
  switch (phase) {
    case HostPhase::Record: return "record";
    case HostPhase::Submit: return "submit";
    case HostPhase::FenceWait: return "fence wait";
    case HostPhase::ReadBack: return "read-back";
  }
  return "?";
}

MemoryUsage fp32_reference_memory(const StepPlan& plan, size_t train_count, size_t test_count,
                                  size_t readback_interval) {
  constexpr size_t kF = 4;  // bytes of an fp32 (and of an int32 label or flag)
  const ModelShape& shape = plan.shape;
  const size_t B = static_cast<size_t>(plan.batch);
  const size_t inputs = static_cast<size_t>(shape.inputs());
  const size_t params = shape.param_count * kF;

  MemoryUsage m;
  m.weights = params;
  m.gradients = params;
  m.optimizer_state = (plan.optimizer == Optimizer::AdamW ? 2 : 1) * params;
  m.activations = B * (inputs + 3) * kF;  // x_batch, labels, per-sample losses, per-sample correct flags
  for (int l = 0; l < shape.layers(); ++l) {
    const size_t tensors = l < shape.layers() - 1 ? 3 : 2;  // the logits layer keeps no pre-activation
    m.activations += tensors * B * static_cast<size_t>(shape.fan_out(l)) * kF;
  }
  m.workspace = (train_count + 3 * test_count + readback_interval) * kF;
  size_t partials = 0;  // PlanEntry::split_k: one buffer serves every split entry
  for (const PlanEntry& e : plan.entries)
    if (e.split_k > 1) partials = std::max(partials, size_t(e.split_k) * size_t(e.OC) * size_t(e.C) * kF);
  m.workspace += partials;
  m.dataset = (train_count + test_count) * (inputs + 1) * kF;
  return m;
}

}  // namespace core
