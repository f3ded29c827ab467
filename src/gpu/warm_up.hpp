// Compiling pipelines before they are needed. A Vulkan driver may compile a pipeline's shader only when it first
// runs: lavapipe (Mesa's llvmpipe) generates its machine code in the first dispatch, 0.1-1 s per kernel on two cores,
// so a new precision's first training step took 5-23 s and counted as training time. gpu::PipelineWarmer runs each
// pipeline once, on a scratch buffer, before a trainer's first step (a stage of building the trainer, its time never
// training time) or in the background between steps (run::BackgroundCompile); each pipeline once per device.
#pragma once
#include <set>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/pipeline.hpp"

namespace gpu {

class Kernels;

class PipelineWarmer {
 public:
  // Throws core::Error(Vulkan) when the scratch buffer cannot be made.
  explicit PipelineWarmer(vk::Context& ctx);

  // One pipeline to run: on its own descriptor set (a trainer's, with the buffers it will train with), or with none
  // on the scratch buffer.
  struct Item {
    const vk::ComputePipeline* pipeline = nullptr;
    VkDescriptorSet set = VK_NULL_HANDLE;
  };
  // Dispatches each item once: one workgroup, every push constant 0, so every size a kernel reads is 0. An item
  // without a set binds every binding to a zeroed scratch buffer (texel bindings through views of it: lavapipe
  // compiles a GEMM's texel variant per kind of view bound, a size that is a power of two or not, so such a pipeline
  // runs on a view of each kind), so that whatever a kernel writes regardless lands there; it is skipped when that
  // pipeline ran before. An item with a set always runs (a variant compiled already costs one empty dispatch): a
  // trainer's own views are exactly what its steps will bind. Use sets only
  // of kernels that write nothing at size 0 (the GEMMs: outputs outside M x N are skipped). One command buffer,
  // submitted and waited for on ctx's queue (call it on the thread that uses the queue, with no other work in
  // flight). Throws core::Error(Vulkan).
  void warm(std::span<const Item> items);
  bool warmed(const vk::ComputePipeline& p) const { return warmed_.count(p.pipeline()) > 0; }

  static constexpr VkDeviceSize kScratchBytes = 64 * 1024;

 private:
  vk::Context* ctx_;
  vk::Buffer scratch_;
  std::set<VkPipeline> warmed_;
};

// Every pipeline a trainer of `kernels`' precision may run, compiling the GEMM and convolution variants not made yet
// (those are otherwise made on first use): every kernel of the table in that precision, split-K's reduce, each GEMM in
// each variant of the device's path (4-wide loads or not; split-K or not for matmul_backward_weight), and, first in
// the list, each convolution in each variant of its path (texel: 4 channels per texel or 1; tiled: scalar loads;
// split-K or not for conv2d_backward_weight).
// run::BackgroundCompile takes the list from its back, so an MLP's kernels are compiled before a CNN's.
std::vector<const vk::ComputePipeline*> every_pipeline(const Kernels& kernels);

}  // namespace gpu
