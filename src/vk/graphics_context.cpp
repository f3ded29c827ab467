// The dashboard's device (the graphics configuration of vk::Device) and the two memory objects it allocates: a
// read-back buffer and an offscreen colour image.
#include "vk/graphics_context.hpp"

#include <fmt/format.h>


#include "core/error.hpp"

namespace vk {

namespace {
DeviceOptions graphics_device(const GraphicsOptions& o) {
  DeviceOptions d;
  d.device_index = o.device_index;  // the same index the trainer was given: one physical device for both
  d.validation = o.validation;
  d.app_name = "trainscope dashboard";
  d.instance_extensions = o.instance_extensions;
  if (o.swapchain) d.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  d.queue = VK_QUEUE_GRAPHICS_BIT;
  d.can_present = o.can_present;
  return d;
}
}  // namespace

GraphicsContext::GraphicsContext(const GraphicsOptions& options) : Device(graphics_device(options)) {}

HostReadBuffer::HostReadBuffer(const GraphicsContext& gpu, VkDeviceSize bytes) : size_(bytes) {
  VkDevice dev = gpu.device();
  buffer_ = create_buffer(dev, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, "read-back");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, buffer_.get(), &req);
  // Coherent, so the host reads what the copy wrote once the frame's fence has signalled; cached for fast reads.
  const uint32_t type =
      gpu.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                      VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  memory_ = allocate_memory(dev, req.size, type, "a screenshot read-back", gpu.info().name);
  VkDeviceMemory memory = memory_.get();
  check(vkBindBufferMemory(dev, buffer_.get(), memory, 0), "vkBindBufferMemory (read-back)");
  check(vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory (read-back)");
}

Handle<VkImageView> create_color_view(VkDevice device, VkImage image, VkFormat format) {
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = format;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageView view = VK_NULL_HANDLE;
  check(vkCreateImageView(device, &vi, nullptr, &view), "vkCreateImageView");
  return Handle<VkImageView>(view, [device](VkImageView v) { vkDestroyImageView(device, v, nullptr); });
}

ColorTarget::ColorTarget(const GraphicsContext& gpu, uint32_t width, uint32_t height, VkFormat format) {
  VkDevice dev = gpu.device();
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = format;
  ii.extent = {width, height, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  ii.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImage image = VK_NULL_HANDLE;
  check(vkCreateImage(dev, &ii, nullptr, &image), "vkCreateImage (offscreen target)");
  image_ = Handle<VkImage>(image, [dev](VkImage i) { vkDestroyImage(dev, i, nullptr); });
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(dev, image, &req);
  memory_ = allocate_memory(dev, req.size, gpu.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0),
                            "the offscreen render target", gpu.info().name);
  VkDeviceMemory memory = memory_.get();
  check(vkBindImageMemory(dev, image, memory, 0), "vkBindImageMemory (offscreen target)");
  view_ = create_color_view(dev, image, format);
}

}  // namespace vk
