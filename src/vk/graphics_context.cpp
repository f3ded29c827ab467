// The dashboard's own instance and device (graphics queue, optional swapchain), its validation messenger, and the
// two memory objects it allocates: a read-back buffer and an offscreen colour image.
#include "vk/graphics_context.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace vk {

namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_instance_extension(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_device_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  (error ? log->errors : log->warnings)++;
  std::lock_guard lock(log->mutex);
  if (log->first_messages.size() < 8)
    log->first_messages.push_back(fmt::format("[{}] {}", error ? "error" : "warning", data->pMessage));
  return VK_FALSE;
}

Handle<VkInstance> create_graphics_instance(const GraphicsOptions& options) {
  std::vector<const char*> layers, extensions;
  for (const auto& e : options.instance_extensions) {
    if (!has_instance_extension(e.c_str()))
      throw core::Error(core::ErrorKind::Vulkan,
                        fmt::format("Vulkan: the instance extension {} is missing (the window system needs it; is "
                                    "the Vulkan driver for this display installed?)",
                                    e));
    extensions.push_back(e.c_str());
  }
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  if (options.validation) {
    if (!has_layer(kValidationLayer))
      throw core::Error(core::ErrorKind::Vulkan,
                        "Vulkan: the validation layer VK_LAYER_KHRONOS_validation is not installed "
                        "(install vulkan-validationlayers, or run without --validation)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  if (has_instance_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "trainscope dashboard";
  app.apiVersion = VK_API_VERSION_1_2;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    throw core::Error(core::ErrorKind::Vulkan,
                      fmt::format("Vulkan: no Vulkan driver found ({}): install mesa-vulkan-drivers (lavapipe) or "
                                  "your GPU's Vulkan driver",
                                  result_name(r)));
  check(r, "vkCreateInstance (dashboard)");
  return Handle<VkInstance>(instance, [](VkInstance i) { vkDestroyInstance(i, nullptr); });
}

}  // namespace

GraphicsContext::GraphicsContext(const GraphicsOptions& options) : validation_log_(std::make_unique<ValidationLog>()) {
  instance_ = create_graphics_instance(options);
  VkInstance inst = instance_.get();
  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst, "vkCreateDebugUtilsMessengerEXT"));
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT"));
    if (create && destroy) {
      VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      mi.messageSeverity =
          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
      mi.pfnUserCallback = on_message;
      mi.pUserData = validation_log_.get();
      VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
      check(create(inst, &mi, nullptr, &messenger), "vkCreateDebugUtilsMessengerEXT");
      messenger_ = Handle<VkDebugUtilsMessengerEXT>(
          messenger, [inst, destroy](VkDebugUtilsMessengerEXT m) { destroy(inst, m, nullptr); });
    }
  }

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(inst, &count, nullptr);
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(inst, &count, physicals.data());
  if (count == 0)
    throw core::Error(core::ErrorKind::Vulkan,
                      "Vulkan: no Vulkan device found: install mesa-vulkan-drivers (lavapipe) or your GPU's driver");
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < count; ++i) infos.push_back(describe_device(physicals[i], static_cast<int>(i)));
  // The same index the trainer was given, so the dashboard and the GPU trainer share one physical device.
  int index = options.device_index < 0 ? pick_best_device(infos) : options.device_index;
  if (index >= static_cast<int>(count))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--device {}: out of range; this machine has {} Vulkan device(s), 0..{} "
                                  "(see trainscope devices)",
                                  index, count, count - 1));
  physical_ = physicals[index];
  info_ = infos[index];
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
    throw core::Error(core::ErrorKind::Vulkan,
                      fmt::format("Vulkan: device {} has no graphics queue{} for the dashboard", info_.name,
                                  options.can_present ? " that can present to this display" : ""));

  std::vector<const char*> device_extensions;
  if (options.swapchain) {
    if (!has_device_extension(physical_, VK_KHR_SWAPCHAIN_EXTENSION_NAME))
      throw core::Error(core::ErrorKind::Vulkan,
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

  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = queue_family_;
  VkCommandPool pool = VK_NULL_HANDLE;
  check(vkCreateCommandPool(device, &pi, nullptr, &pool), "vkCreateCommandPool (dashboard)");
  command_pool_ = Handle<VkCommandPool>(pool, [device](VkCommandPool p) { vkDestroyCommandPool(device, p, nullptr); });
}

GraphicsContext::~GraphicsContext() {
  // Only this context's own device: the trainer's device and fences are never waited on from here.
  if (device_) vkDeviceWaitIdle(device_.get());
}

uint32_t GraphicsContext::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                      VkMemoryPropertyFlags preferred) const {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
  }
  throw core::Error(core::ErrorKind::Vulkan, "Vulkan: no suitable memory type for the dashboard on " + info_.name);
}

void GraphicsContext::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
  VkDevice dev = device_.get();
  VkCommandPool pool = command_pool_.get();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(dev, &ai, &cmd), "vkAllocateCommandBuffers");
  Handle<VkCommandBuffer> owner(cmd, [dev, pool](VkCommandBuffer c) { vkFreeCommandBuffers(dev, pool, 1, &c); });
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  record(cmd);
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(vkCreateFence(dev, &fi, nullptr, &fence), "vkCreateFence");
  Handle<VkFence> fence_owner(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit (one-shot)");
  check(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences (one-shot)");
}

HostReadBuffer::HostReadBuffer(const GraphicsContext& gpu, VkDeviceSize bytes) : size_(bytes) {
  VkDevice dev = gpu.device();
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  check(vkCreateBuffer(dev, &bi, nullptr, &buffer), "vkCreateBuffer (read-back)");
  buffer_ = Handle<VkBuffer>(buffer, [dev](VkBuffer b) { vkDestroyBuffer(dev, b, nullptr); });
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  // Coherent, so the host reads what the copy wrote once the frame's fence has signalled; cached for fast reads.
  ai.memoryTypeIndex =
      gpu.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                      VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  check(vkAllocateMemory(dev, &ai, nullptr, &memory), "vkAllocateMemory (read-back)");
  memory_ = Handle<VkDeviceMemory>(memory, [dev](VkDeviceMemory m) { vkFreeMemory(dev, m, nullptr); });
  check(vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory (read-back)");
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
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = gpu.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  check(vkAllocateMemory(dev, &ai, nullptr, &memory), "vkAllocateMemory (offscreen target)");
  memory_ = Handle<VkDeviceMemory>(memory, [dev](VkDeviceMemory m) { vkFreeMemory(dev, m, nullptr); });
  check(vkBindImageMemory(dev, image, memory, 0), "vkBindImageMemory (offscreen target)");
  view_ = create_color_view(dev, image, format);
}

}  // namespace vk
