// gpu::device_fit_problem: whether a GPU training run fits a device, decided from the sizes alone before anything is
// allocated, so that a model or batch size that a device cannot take is refused at once, naming the limit and what to
// change, instead of failing inside the driver (or binding past a limit, which lavapipe tolerates and a real GPU may
// not). The runtime checks in vk:: (buffers, bindings, dispatches, workgroups) stay the backstop.
#pragma once
#include <string>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/run_plan.hpp"
#include "vk/devices.hpp"

namespace gpu {

// "" when a GPU training run of `cfg` on `data` fits `device` (its DeviceLimits, after any device profile), else one
// line saying what does not fit, the limit, and the setting to change. What is checked, over the tensors
// gpu::Trainer allocates (core::TensorLayout):
//   - every tensor a kernel binds whole (the batch input, each layer's activations, pre-activations and their
//     gradients, the flat parameters, gradients and optimizer state, per-sample results) against
//     maxStorageBufferRange: "--batch 60000 needs a 4.3 GB buffer for layer 1's activations (60000 x 18000 fp32);
//     NVIDIA ... binds at most 4.3 GB of a buffer (maxStorageBufferRange): use --batch <= 59652, or smaller --hidden
//     sizes";
//   - the training and test sets, bound in chunks of rows (gather_batch), against maxBufferSize and
//     maxMemoryAllocationSize (use --limit);
//   - the number of storage buffers a kernel binds against maxPerStageDescriptorStorageBuffers;
//   - everything together against the largest device-local memory heap.
// Sizes are in decimal units (1 GB = 1e9 bytes), as the README's figures.
std::string device_fit_problem(const core::TrainConfig& cfg, const core::DataSplit& data,
                               const vk::DeviceInfo& device);
// The same with the run's plan worked out already (core::run_plan(cfg, data): the GPU trainer's own).
std::string device_fit_problem(const core::TrainConfig& cfg, const core::RunPlan& run, const vk::DeviceInfo& device);

}  // namespace gpu
