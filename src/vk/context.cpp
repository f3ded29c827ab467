// Instance, device and queue set-up; the validation messenger.
#include "vk/context.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace vk {

Context::Context(const ContextOptions& options) : validation_log_(std::make_unique<ValidationLog>()) {
  instance_ = create_instance(options.validation);
  if (options.validation) messenger_ = create_validation_messenger(instance_.get(), *validation_log_);
  PickedDevice picked = pick_physical_device(instance_.get(), options.device_index);
  physical_ = picked.physical;
  info_ = std::move(picked.info);
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
    throw Error(Failure::Unsupported, fmt::format("Vulkan: device {} has no compute queue", info_.name));

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

  command_pool_ = create_command_pool(device, queue_family_);
}

Context::~Context() {
  if (device_) vkDeviceWaitIdle(device_.get());
}

uint32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred) const {
  return find_memory_type(memory_, type_bits, required, preferred, info_.name);
}

void Context::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
  submit_and_wait(device_.get(), command_pool_.get(), queue_, record);
}

}  // namespace vk
