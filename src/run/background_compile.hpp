// run::BackgroundCompile: the dashboard's GPU backend compiles every pipeline the controls can select while it
// trains, a pipeline at a time between its steps, so that a switch of precision (or batch size, optimizer, teaching
// toggle) answers in seconds: measured on lavapipe, the first fp16 step after a switch took 5-23 s when its kernels
// were compiled inside it. Each piece runs on the GPU worker's thread with its training clock stopped (the device's
// queue is that thread's), through the backend's gpu::DeviceCache: the trainers made later get the same, already
// compiled and run, pipelines. A Vulkan failure ends the background work with a message; training goes on.
// Everything it makes belongs to one device: when the cache hands out another (a Reset after the device was lost or
// hung), the old device's kernels and pending pipelines are dropped, before that device, and the new one's are
// compiled from the start; nothing of the old device is run on the new one (the dashboard aborted in
// vkDestroyPipeline, or under --validation crashed in PipelineWarmer::warm, after a device loss and a Reset).
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
struct SharedDevice;
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
  // The device of kernels_ and pending_, kept alive while they are: declared before them, destroyed after them.
  std::shared_ptr<gpu::SharedDevice> device_;
  std::shared_ptr<const gpu::Kernels> kernels_;  // the set being compiled
  std::vector<const vk::ComputePipeline*> pending_;  // pipelines of kernels_
  size_t total_ = 0;
};

}  // namespace run
