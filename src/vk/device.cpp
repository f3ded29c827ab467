// vk::Device: instance, validation messenger, physical device, logical device with one queue, command pool.
#include "vk/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace vk {

namespace {

// The first queue family with all of `required` (and `preferred`, if any has them) that passes the present test.
bool pick_queue_family(VkInstance instance, VkPhysicalDevice physical, const DeviceOptions& o, uint32_t& family) {
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
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  if (!pick_queue_family(instance_.get(), physical_, o, queue_family_))
    throw Error(Failure::Unsupported,
                fmt::format("Vulkan: device {} has no {} queue{}", info_.name,
                            (o.queue & VK_QUEUE_GRAPHICS_BIT) ? "graphics" : "compute",
                            o.can_present ? " that can present to this display" : ""));
  // The limits of the queue family in use (its timestamp bits), then the profile over them.
  info_.limits = read_limits(physical_, static_cast<int>(queue_family_));
  info_ = with_profile(std::move(info_), o.profile ? o.profile : profile_from_environment());
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
  if (o.validation && injected_validation_message()) {
    // TRAINSCOPE_INJECT_FAULT=validation-message: one real message of the layer, so that tests see --validation fail
    // a run (VUID-VkBufferCreateInfo-size-00912: a buffer of size 0).
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (vkCreateBuffer(device, &bi, nullptr, &buffer) == VK_SUCCESS && buffer != VK_NULL_HANDLE)
      vkDestroyBuffer(device, buffer, nullptr);
  }
}

Device::~Device() {
  // A lost device runs nothing more; a hung one is only destroyed once its work finished (gpu/trainer.cpp keeps what
  // a hung device may still use, and the device with it, until the process ends).
  if (device_ && health() != Health::Lost) vkDeviceWaitIdle(device_.get());
}

void Device::mark(Health health) {
  Health now = health_.load();
  while (now != Health::Lost && !health_.compare_exchange_weak(now, health)) {
  }
}

void Device::check(VkResult result, const char* what) {
  if (result == VK_ERROR_DEVICE_LOST) mark(Health::Lost);
  vk::check(result, what);
}

void Device::wait(VkFence fence, double timeout_s, const std::string& what, bool injectable) {
  const uint64_t ns = static_cast<uint64_t>(std::clamp(timeout_s, 0.0, 1e9) * 1e9);
  const VkResult r = injectable && injected_fence_timeout() ? VK_TIMEOUT
                                                             : vkWaitForFences(device_.get(), 1, &fence, VK_TRUE, ns);
  if (r == VK_TIMEOUT) {
    mark(Health::Hung);
    throw Error(Failure::Timeout,
                fmt::format("Vulkan: the GPU did not finish {} within {:.0f} s (a hung GPU or driver); this device is "
                            "not used again",
                            what, timeout_s),
                r);
  }
  check(r, ("vkWaitForFences (" + what + ")").c_str());
}

uint32_t Device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
  return find_memory_type(memory_, type_bits, required, preferred, info_.name);
}

uint64_t Device::masked_ticks(uint64_t raw) {
  const uint32_t bits = timestamp_valid_bits();
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  std::lock_guard lock(clock_mutex_);
  if (info_.limits.timestamps_near_wrap && bits < 64) {
    if (!near_wrap_offset_) {  // the first reading lands 0.5 s before the wrap
      const double period = info_.limits.timestamp_period_ns > 0 ? info_.limits.timestamp_period_ns : 1.0;
      const uint64_t before_wrap = std::min<uint64_t>(mask / 2, static_cast<uint64_t>(0.5e9 / period));
      near_wrap_offset_ = ((mask + 1) - before_wrap - (raw & mask)) & mask;
    }
    raw += *near_wrap_offset_;
  }
  return raw & mask;
}

uint64_t Device::clock_ticks(uint64_t masked) {
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::lock_guard lock(clock_mutex_);
  const uint64_t ticks = unwrap_timestamp(masked, timestamp_valid_bits(), info_.limits.timestamp_period_ns,
                                          last_ticks_, now - last_ticks_host_s_);
  last_ticks_ = ticks;
  last_ticks_host_s_ = now;
  return ticks;
}

void Device::run_one_shot(const std::function<void(VkCommandBuffer)>& record) {
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
  try {
    wait(fence, kOneShotTimeoutS, "a set-up command (upload, download or evaluation)");
  } catch (const Error&) {
    // A hung device may still run the command buffer and signal the fence: both are kept (never freed), as is the
    // device itself by whoever abandons it.
    if (health() == Health::Hung) {
      (void)owner.release();
      (void)fence_owner.release();
    }
    throw;
  }
}

}  // namespace vk
