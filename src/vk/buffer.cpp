// Buffer allocation and staging copies.
#include "vk/buffer.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"
#include "vk/setup.hpp"

namespace vk {

namespace {

// A buffer, and the allocation under it, within the device's limits.
void check_size(const Context& ctx, const std::string& name, uint64_t bytes, const char* limit, uint64_t most) {
  if (bytes > most)
    throw Error(Failure::Limit,
                fmt::format("Vulkan: a buffer of {} for {} is more than {} allows ({} {})", size_text(bytes), name,
                            display_name(ctx.info()), limit, size_text(most)),
                VK_SUCCESS, bytes);
}

}  // namespace

Buffer::Buffer(Context& ctx, VkDeviceSize bytes, MemoryKind kind, std::string name)
    : size_(bytes), name_(std::move(name)) {
  check_size(ctx, name_, bytes, "maxBufferSize", ctx.limits().max_buffer_size);
  VkDevice dev = ctx.device();
  buffer_ = create_buffer(
      dev, bytes,
      // texel views: the GEMM operands of the texel variant (gpu/gemm_config.hpp)
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
          VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      name_);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, buffer_.get(), &req);
  check_size(ctx, name_, req.size, "maxMemoryAllocationSize", ctx.limits().max_memory_allocation_size);
  const uint32_t type = kind == MemoryKind::DeviceLocal
                            ? ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0)
                            : ctx.memory_type(req.memoryTypeBits,
                                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                              VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  memory_ = allocate_memory(dev, req.size, type, name_, ctx.info().name);
  VkDeviceMemory memory = memory_.get();
  check(vkBindBufferMemory(dev, buffer_.get(), memory, 0), "vkBindBufferMemory");
  if (kind == MemoryKind::HostVisible) check(vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
}

namespace {

// A copy past a buffer's end would write into whatever lies beyond it: a mistake of the caller, refused.
void check_range(const std::string& name, VkDeviceSize size, VkDeviceSize bytes, VkDeviceSize offset) {
  if (offset > size || bytes > size - offset)
    throw core::Error(core::ErrorKind::Internal, fmt::format("buffer {}: a copy of {} bytes at offset {} does not fit "
                                                             "in its {} bytes", name, bytes, offset, size));
}

}  // namespace

void Buffer::upload(Context& ctx, const void* data, VkDeviceSize bytes, VkDeviceSize offset) {
  if (bytes == 0) return;
  check_range(name_, size_, bytes, offset);
  if (mapped_) {
    std::memcpy(static_cast<char*>(mapped_) + offset, data, bytes);
    return;
  }
  Buffer staging(ctx, bytes, MemoryKind::HostVisible, name_ + " (staging)");
  std::memcpy(staging.mapped(), data, bytes);
  ctx.run_one_shot([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, offset, bytes};
    vkCmdCopyBuffer(cmd, staging.handle(), buffer_.get(), 1, &region);
  });
}

// A fence wait makes the device's writes available only to the device, not visible to the host ("Signaling a fence
// and waiting on the host does not guarantee that the results of memory accesses will be visible to the host",
// Vulkan spec, 7.3 Fences): every host read of GPU-written memory follows a barrier to the host stage.
void host_read_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Buffer::download(Context& ctx, void* data, VkDeviceSize bytes, VkDeviceSize offset) const {
  if (bytes == 0) return;
  check_range(name_, size_, bytes, offset);
  if (mapped_) {
    // RAW (device -> host): whatever earlier submissions wrote here, visible to the memcpy below.
    ctx.run_one_shot(host_read_barrier);
    std::memcpy(data, static_cast<const char*>(mapped_) + offset, bytes);
    return;
  }
  Buffer staging(ctx, bytes, MemoryKind::HostVisible, name_ + " (staging)");
  ctx.run_one_shot([&](VkCommandBuffer cmd) {
    // The copy reads what earlier compute dispatches wrote (queue submission order + this barrier).
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    VkBufferCopy region{offset, 0, bytes};
    vkCmdCopyBuffer(cmd, buffer_.get(), staging.handle(), 1, &region);
    host_read_barrier(cmd);  // RAW (transfer -> host): the staging copy, read by the memcpy below
  });
  std::memcpy(data, staging.mapped(), bytes);
}

void Buffer::zero(Context& ctx) {
  ctx.run_one_shot([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer_.get(), 0, VK_WHOLE_SIZE, 0); });
}

}  // namespace vk
