// vk::Device: instance, validation messenger, physical device, logical device with one queue, command pool.
#include "vk/device.hpp"

#include <fmt/format.h>

namespace vk {

namespace {

// The first queue family with all of `required` (and `preferred`, if any has them) that passes the present test.
bool pick_queue_family(VkInstance instance, VkPhysicalDevice physical, const DeviceOptions& o, uint32_t& family,
                       uint32_t& timestamp_bits) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  for (int pass = o.queue_preferred ? 0 : 1; pass < 2; ++pass) {
    const VkQueueFlags want = pass == 0 ? (o.queue | o.queue_preferred) : o.queue;
    for (uint32_t f = 0; f < count; ++f) {
      if ((families[f].queueFlags & want) != want) continue;
      if (o.can_present && !o.can_present(instance, physical, f)) continue;
      family = f;
      timestamp_bits = families[f].timestampValidBits;
      return true;
    }
  }
  return false;
}

}  // namespace

Device::Device(const DeviceOptions& o) : validation_log_(std::make_unique<ValidationLog>()) {
  instance_ = create_instance(o.validation, o.instance_extensions, o.app_name);
  if (o.validation) messenger_ = create_validation_messenger(instance_.get(), *validation_log_);
  PickedDevice picked = pick_physical_device(instance_.get(), o.device_index);
  physical_ = picked.physical;
  info_ = std::move(picked.info);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  limits_ = props.limits;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  if (!pick_queue_family(instance_.get(), physical_, o, queue_family_, timestamp_valid_bits_))
    throw Error(Failure::Unsupported,
                fmt::format("Vulkan: device {} has no {} queue{}", info_.name,
                            (o.queue & VK_QUEUE_GRAPHICS_BIT) ? "graphics" : "compute",
                            o.can_present ? " that can present to this display" : ""));
  const std::vector<std::string> extension_names = device_extensions_to_enable(
      o.device_extensions, [&](const char* e) { return has_device_extension(physical_, e); }, info_.name);
  std::vector<const char*> extensions;
  for (const auto& e : extension_names) extensions.push_back(e.c_str());

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  // Mixed precision builds on 16-bit storage buffers (and may use fp16 arithmetic): enabled where the device has them.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f11.storageBuffer16BitAccess = o.sixteen_bit && info_.storage_16bit ? VK_TRUE : VK_FALSE;
  f12.shaderFloat16 = o.sixteen_bit && info_.shader_float16 ? VK_TRUE : VK_FALSE;
  f11.pNext = &f12;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = o.sixteen_bit ? &f11 : nullptr;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  di.ppEnabledExtensionNames = extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  check(vkCreateDevice(physical_, &di, nullptr, &device), "vkCreateDevice");
  device_ = Handle<VkDevice>(device, [](VkDevice d) { vkDestroyDevice(d, nullptr); });
  vkGetDeviceQueue(device, queue_family_, 0, &queue_);
  command_pool_ = create_command_pool(device, queue_family_);
}

Device::~Device() {
  if (device_) vkDeviceWaitIdle(device_.get());
}

uint32_t Device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
  return find_memory_type(memory_, type_bits, required, preferred, info_.name);
}

void Device::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
  submit_and_wait(device_.get(), command_pool_.get(), queue_, record);
}

}  // namespace vk
