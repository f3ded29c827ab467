// vk::ComputePipeline (a kernel's SPIR-V, its descriptor set layout of storage buffers, push constants and
// specialization constants), vk::DescriptorPool, vk::TimestampQueries and the recording helpers of a step.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vk/buffer.hpp"
#include "vk/context.hpp"

namespace vk {

// What one binding of a kernel takes: a storage buffer (the default), or a uniform texel buffer read through a view of
// the given format (DescriptorPool::allocate makes the view).
struct BindingKind {
  VkDescriptorType type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  VkFormat texel_format = VK_FORMAT_UNDEFINED;  // VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER only
};

// The workgroup a pipeline runs with (its local size after specialization, its shared memory), checked against the
// device's limits when the pipeline is made.
struct Workgroup {
  std::array<uint32_t, 3> size{1, 1, 1};  // local_size x, y, z
  uint32_t shared_bytes = 0;              // the shader's `shared` arrays
};

class ComputePipeline {
 public:
  ComputePipeline() = default;
  // kernel: an embedded shader name (vk::embedded_shaders()). bindings: number of buffers (binding 0..n-1), storage
  // buffers unless `kinds` (empty, or one per binding) says otherwise. push_constant_bytes: size of the kernel's
  // push-constant block. workgroup: its local size and shared memory as `spec` makes them. spec: specialization
  // constants with ids 0..n-1. cache: a VkPipelineCache to compile through (vk::PipelineCache), or none.
  // Throws vk::Error(Limit) when the workgroup, its shared memory, the push constants or the bindings per stage are
  // more than the device allows (naming the limit), core::Error(Vulkan) if the kernel is unknown or the pipeline
  // cannot be created.
  ComputePipeline(Context& ctx, const std::string& kernel, uint32_t bindings, uint32_t push_constant_bytes,
                  Workgroup workgroup, std::span<const uint32_t> spec = {}, std::span<const BindingKind> kinds = {},
                  VkPipelineCache cache = VK_NULL_HANDLE);

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  uint32_t bindings() const { return bindings_; }
  uint32_t push_constant_bytes() const { return push_bytes_; }
  const std::string& kernel() const { return kernel_; }
  BindingKind binding_kind(uint32_t binding) const { return binding < kinds_.size() ? kinds_[binding] : BindingKind{}; }
  const Workgroup& workgroup() const { return workgroup_; }
  // The device's limits the pipeline was made for: bindings and dispatches are checked against them.
  const DeviceLimits& limits() const { return limits_; }

 private:
  std::string kernel_;
  Workgroup workgroup_;
  DeviceLimits limits_;
  uint32_t bindings_ = 0;
  std::vector<BindingKind> kinds_;  // empty: all storage buffers
  uint32_t push_bytes_ = 0;
  Handle<VkShaderModule> module_;
  Handle<VkDescriptorSetLayout> set_layout_;
  Handle<VkPipelineLayout> layout_;
  Handle<VkPipeline> pipeline_;
};

// A part of a buffer bound to one binding: offset and range in bytes (range 0: to the end).
struct BufferRange {
  const Buffer* buffer = nullptr;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
};

class DescriptorPool {
 public:
  DescriptorPool() = default;
  // Room for max_sets sets of up to max_bindings buffers each (storage or texel).
  DescriptorPool(Context& ctx, uint32_t max_sets, uint32_t max_bindings);
  // A set for `pipeline` with binding i -> ranges[i] (ranges.size() == pipeline.bindings()). A texel binding gets a
  // view of its range in the binding's format, owned by the pool (its range rounded down to whole texels).
  // Throws vk::Error(Limit) for a range the device cannot bind: more bytes than maxStorageBufferRange, more texels
  // than maxTexelBufferElements, an offset off the minimum alignment (the message names kernel, binding and limit).
  VkDescriptorSet allocate(Context& ctx, const ComputePipeline& pipeline, std::span<const BufferRange> ranges);

 private:
  Handle<VkDescriptorPool> pool_;
  std::vector<Handle<VkBufferView>> views_;
};

// One query pool of timestamps; results in nanoseconds relative to query 0.
class TimestampQueries {
 public:
  TimestampQueries() = default;
  TimestampQueries(Context& ctx, uint32_t count);
  void reset(VkCommandBuffer cmd);
  // Written when every earlier command of the queue has finished `stage` (the compute-shader stage by default).
  void write(VkCommandBuffer cmd, uint32_t index, VkPipelineStageFlagBits stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  // Waits for nothing: call after the fence of the command buffer. ns[i] = (t[i] - t[0]) * timestampPeriod,
  // the difference taken modulo 2^timestampValidBits (an interval across the counter's wrap-around keeps its
  // length). first_ns (if given): t[0] * timestampPeriod itself, on the device's timestamp clock with its
  // wrap-arounds undone (Device::clock_ticks), so that several command buffers can be placed relative to each other.
  std::vector<double> read_ns(Context& ctx, uint32_t count, double* first_ns = nullptr) const;
  uint32_t capacity() const { return count_; }

 private:
  Handle<VkQueryPool> pool_;
  uint32_t count_ = 0;
};

// Binds pipeline and set, pushes constants, dispatches groups_x * groups_y * groups_z workgroups. Throws
// vk::Error(Limit) when a count is more than the device's maxComputeWorkGroupCount (the pipeline's limits()).
void record_dispatch(VkCommandBuffer cmd, const ComputePipeline& pipeline, VkDescriptorSet set, const void* push,
                     uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);

// A memory dependency from all earlier compute-shader writes to later compute-shader reads and writes.
// Callers say at the call site which hazard (read-after-write or write-after-read on which buffer) it prevents.
void compute_barrier(VkCommandBuffer cmd);

}  // namespace vk
