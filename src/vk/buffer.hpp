// vk::Buffer: a storage buffer with its own memory allocation (a training run holds a few dozen, so one allocation
// each is fine), device-local or host-visible. Uploads and downloads go through a staging buffer where needed.
#pragma once
#include <vulkan/vulkan.h>

#include <cstddef>
#include <string>

#include "vk/context.hpp"

namespace vk {

enum class MemoryKind {
  DeviceLocal,  // fastest for the GPU; filled by upload()
  HostVisible,  // mapped, coherent: small buffers the host reads every few steps (loss history)
};

// A barrier from every earlier compute-shader and transfer write to host reads: recorded last in a command buffer
// whose results the host reads from mapped memory after the fence.
void host_read_barrier(VkCommandBuffer cmd);

class Buffer {
 public:
  Buffer() = default;
  // bytes > 0. name is used in error messages ("out of GPU memory allocating 188.2 MiB for x_train").
  // Throws core::Error(Vulkan) on allocation failure.
  Buffer(Context& ctx, VkDeviceSize bytes, MemoryKind kind, std::string name);

  VkBuffer handle() const { return buffer_.get(); }
  VkDeviceSize size() const { return size_; }
  const std::string& name() const { return name_; }
  void* mapped() const { return mapped_; }  // null unless host-visible

  // Copies bytes from host memory to [offset, offset+bytes) of this buffer (waits for completion).
  void upload(Context& ctx, const void* data, VkDeviceSize bytes, VkDeviceSize offset = 0);
  // Copies [offset, offset+bytes) of this buffer to host memory (waits for completion).
  void download(Context& ctx, void* data, VkDeviceSize bytes, VkDeviceSize offset = 0) const;
  // Fills the whole buffer with zero bytes (waits).
  void zero(Context& ctx);

 private:
  Handle<VkBuffer> buffer_;
  Handle<VkDeviceMemory> memory_;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
  std::string name_;
};

}  // namespace vk
