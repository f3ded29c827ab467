// The dashboard's own instance and device (graphics queue, optional swapchain), its validation messenger, and the
// two memory objects it allocates: a read-back buffer and an offscreen colour image.
#include "vk/graphics_context.hpp"

#include <fmt/format.h>


#include "core/error.hpp"

namespace vk {

GraphicsContext::GraphicsContext(const GraphicsOptions& options) : validation_log_(std::make_unique<ValidationLog>()) {
  instance_ = create_instance(options.validation, options.instance_extensions, "trainscope dashboard");
  VkInstance inst = instance_.get();
  if (options.validation) messenger_ = create_validation_messenger(inst, *validation_log_);
  // The same index the trainer was given, so the dashboard and the GPU trainer share one physical device.
  PickedDevice picked = pick_physical_device(inst, options.device_index);
  physical_ = picked.physical;
  info_ = std::move(picked.info);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
  bool found = false;
  for (uint32_t f = 0; f < family_count && !found; ++f) {
    if (!(families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
    if (options.can_present && !options.can_present(inst, physical_, f)) continue;
    queue_family_ = f;
    found = true;
  }
  if (!found)
    throw Error(Failure::Unsupported,
                fmt::format("Vulkan: device {} has no graphics queue{} for the dashboard", info_.name,
                                  options.can_present ? " that can present to this display" : ""));

  std::vector<const char*> device_extensions;
  if (options.swapchain) {
    if (!has_device_extension(physical_, VK_KHR_SWAPCHAIN_EXTENSION_NAME))
      throw Error(Failure::MissingExtension,
                  fmt::format("Vulkan: device {} cannot present to a window (no VK_KHR_swapchain)", info_.name));
    device_extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = static_cast<uint32_t>(device_extensions.size());
  di.ppEnabledExtensionNames = device_extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  check(vkCreateDevice(physical_, &di, nullptr, &device), "vkCreateDevice (dashboard)");
  device_ = Handle<VkDevice>(device, [](VkDevice d) { vkDestroyDevice(d, nullptr); });
  vkGetDeviceQueue(device, queue_family_, 0, &queue_);

  command_pool_ = create_command_pool(device, queue_family_);
}

GraphicsContext::~GraphicsContext() {
  // Only this context's own device: the trainer's device and fences are never waited on from here.
  if (device_) vkDeviceWaitIdle(device_.get());
}

uint32_t GraphicsContext::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                      VkMemoryPropertyFlags preferred) const {
  return find_memory_type(memory_, type_bits, required, preferred, info_.name);
}

void GraphicsContext::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
  submit_and_wait(device_.get(), command_pool_.get(), queue_, record);
}

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
                            "the offscreen render target", gpu.info().name, "(try a smaller --size)");
  VkDeviceMemory memory = memory_.get();
  check(vkBindImageMemory(dev, image, memory, 0), "vkBindImageMemory (offscreen target)");
  view_ = create_color_view(dev, image, format);
}

}  // namespace vk
