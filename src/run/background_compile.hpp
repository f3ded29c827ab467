// run::BackgroundCompile: the dashboard's GPU backend compiles every pipeline the controls can select while it
// trains, a pipeline at a time between its steps, so that a switch of precision (or batch size, optimizer, teaching
// toggle) answers in seconds: measured on lavapipe, the first fp16 step after a switch took 5-23 s when its kernels
// were compiled inside it. Each piece runs on the GPU worker's thread with its training clock stopped (the device's
// queue is that thread's), through the backend's gpu::DeviceCache: the trainers made later get the same, already
// compiled and run, pipelines. A Vulkan failure ends the background work with a message; training goes on.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "vk/context.hpp"

namespace vk {
class ComputePipeline;
}

namespace gpu {
class DeviceCache;
class Kernels;
}  // namespace gpu

namespace run {

class BackgroundCompile {
 public:
  // `precisions`: the ones to compile, in this order (the device's unsupported ones are skipped).
  BackgroundCompile(std::shared_ptr<gpu::DeviceCache> cache, std::vector<core::Precision> precisions);
  // The device the backend's trainers use (their vk::ContextOptions): told by the trainer factory.
  void use_device(const vk::ContextOptions& options);
  // One piece: makes one precision's kernel set, or runs one pipeline once. Returns what it is doing ("compiling the
  // bf16 kernels (3/24)"), or "" when everything is compiled. Throws core::Error(Vulkan).
  std::string step();

 private:
  std::shared_ptr<gpu::DeviceCache> cache_;
  std::vector<core::Precision> precisions_;
  size_t next_precision_ = 0;
  bool device_known_ = false;
  vk::ContextOptions options_;
  std::shared_ptr<const gpu::Kernels> kernels_;  // the set being compiled
  std::vector<const vk::ComputePipeline*> pending_;
  size_t total_ = 0;
};

}  // namespace run
