// Instance, device and queue set-up; the validation messenger.
#include "vk/context.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace vk {

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    default: return "VkResult";
  }
}

void check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  std::string hint;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    hint = " (out of memory: try a smaller --batch or smaller --hidden sizes)";
  else if (result == VK_ERROR_DEVICE_LOST)
    hint = " (the GPU was lost: driver reset or hang; the CPU backend keeps running)";
  throw core::Error(core::ErrorKind::Vulkan, fmt::format("Vulkan: {} failed: {}{}", what, result_name(result),
                                                         hint));
}

static std::atomic<int> g_validation_errors{0};
static std::atomic<int> g_validation_warnings{0};

ValidationTotals validation_totals() { return {g_validation_errors.load(), g_validation_warnings.load()}; }

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                            VkDebugUtilsMessageTypeFlagsEXT,
                                                            const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                            void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (error) {
    log->errors++;
    g_validation_errors++;
  } else {
    log->warnings++;
    g_validation_warnings++;
  }
  std::lock_guard lock(log->mutex);
  if (log->first_messages.size() < 8)
    log->first_messages.push_back(fmt::format("[{}] {}", error ? "error" : "warning", data->pMessage));
  return VK_FALSE;
}

static bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

static bool has_instance_extension(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

static const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

Handle<VkInstance> create_instance(bool validation) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "trainscope";
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> layers, extensions;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  if (validation) {
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
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&info, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    throw core::Error(core::ErrorKind::Vulkan,
                      fmt::format("Vulkan: no Vulkan driver found ({}): install mesa-vulkan-drivers (lavapipe, a "
                                  "software Vulkan device) or your GPU's Vulkan driver; the CPU backend still runs",
                                  result_name(r)));
  check(r, "vkCreateInstance");
  return Handle<VkInstance>(instance, [](VkInstance i) { vkDestroyInstance(i, nullptr); });
}

Context::Context(const ContextOptions& options) : validation_log_(std::make_unique<ValidationLog>()) {
  instance_ = create_instance(options.validation);
  if (options.validation) {
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = on_validation_message;
    mi.pUserData = validation_log_.get();
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_.get(), "vkCreateDebugUtilsMessengerEXT"));
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_.get(), "vkDestroyDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    if (create && destroy) {
      check(create(instance_.get(), &mi, nullptr, &messenger), "vkCreateDebugUtilsMessengerEXT");
      VkInstance inst = instance_.get();
      messenger_ = Handle<VkDebugUtilsMessengerEXT>(messenger, [inst, destroy](VkDebugUtilsMessengerEXT m) {
        destroy(inst, m, nullptr);
      });
    }
  }

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance_.get(), &count, nullptr);
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(instance_.get(), &count, physicals.data());
  if (count == 0)
    throw core::Error(core::ErrorKind::Vulkan,
                      "Vulkan: no Vulkan device found: install mesa-vulkan-drivers (lavapipe) or your GPU's driver");
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < count; ++i) infos.push_back(describe_device(physicals[i], static_cast<int>(i)));
  int index = options.device_index < 0 ? pick_best_device(infos) : options.device_index;
  if (index >= static_cast<int>(count))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--device {}: out of range; this machine has {} Vulkan device(s), 0..{} "
                                  "(see trainscope devices)", index, count, count - 1));
  physical_ = physicals[index];
  info_ = infos[index];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  limits_ = props.limits;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
  bool found = false;
  // Prefer a compute queue family that also does graphics (the dashboard may share the device); any compute one else.
  for (int pass = 0; pass < 2 && !found; ++pass) {
    for (uint32_t f = 0; f < family_count; ++f) {
      bool compute = families[f].queueFlags & VK_QUEUE_COMPUTE_BIT;
      bool graphics = families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (compute && (pass == 1 || graphics)) {
        queue_family_ = f;
        timestamp_valid_bits_ = families[f].timestampValidBits;
        found = true;
        break;
      }
    }
  }
  if (!found)
    throw core::Error(core::ErrorKind::Vulkan, fmt::format("Vulkan: device {} has no compute queue", info_.name));

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  // Enable the 16-bit features the device has (mixed precision builds on them); nothing else is needed.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f11.storageBuffer16BitAccess = info_.storage_16bit ? VK_TRUE : VK_FALSE;
  f12.shaderFloat16 = info_.shader_float16 ? VK_TRUE : VK_FALSE;
  f11.pNext = &f12;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &f11;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  VkDevice device = VK_NULL_HANDLE;
  check(vkCreateDevice(physical_, &di, nullptr, &device), "vkCreateDevice");
  device_ = Handle<VkDevice>(device, [](VkDevice d) { vkDestroyDevice(d, nullptr); });
  vkGetDeviceQueue(device, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = queue_family_;
  VkCommandPool pool = VK_NULL_HANDLE;
  check(vkCreateCommandPool(device, &pi, nullptr, &pool), "vkCreateCommandPool");
  command_pool_ = Handle<VkCommandPool>(pool, [device](VkCommandPool p) { vkDestroyCommandPool(device, p, nullptr); });
}

Context::~Context() {
  if (device_) vkDeviceWaitIdle(device_.get());
}

uint32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred) const {
  for (int pass = 0; pass < 2; ++pass) {
    VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & want) == want) return i;
  }
  throw core::Error(core::ErrorKind::Vulkan, "Vulkan: no suitable memory type for a buffer on " + info_.name);
}

void Context::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
  VkDevice dev = device_.get();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_.get();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(dev, &ai, &cmd), "vkAllocateCommandBuffers");
  VkCommandPool pool = command_pool_.get();
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

}  // namespace vk
