// vk::Context: the Vulkan instance, the chosen physical device, one logical device with one compute queue, the
// optional validation layer with a debug messenger that counts messages by severity, and a command pool.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vk/devices.hpp"
#include "vk/handle.hpp"
#include "vk/setup.hpp"

namespace vk {

// Totals over every Context and GraphicsContext of the process (tests check that the trainers' contexts reported no
// messages): counts by severity and the first few texts.
struct ValidationTotals {
  int errors = 0;
  int warnings = 0;
  std::vector<std::string> first_messages;  // "[error] ..." / "[warning] ...", at most 16
};
ValidationTotals validation_totals();

struct ContextOptions {
  int device_index = -1;       // -1: pick_best_device
  bool validation = false;     // enable VK_LAYER_KHRONOS_validation; error if it is not installed
};

class Context {
 public:
  // Throws core::Error(Vulkan): no loader, no device, index out of range, no compute queue, missing layer.
  explicit Context(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkInstance instance() const { return instance_.get(); }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_.get(); }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return command_pool_.get(); }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceLimits& limits() const { return limits_; }
  uint32_t timestamp_valid_bits() const { return timestamp_valid_bits_; }
  const ValidationLog& validation_log() const { return *validation_log_; }

  // A memory type index with all `required` flags (and preferably all `preferred` flags) among type_bits.
  // Throws core::Error(Vulkan) when none matches.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  // Records with `record`, submits, and waits (set-up work only: uploads, downloads; never inside a training step).
  void run_one_shot(const std::function<void(VkCommandBuffer)>& record);

 private:
  std::unique_ptr<ValidationLog> validation_log_;
  Handle<VkInstance> instance_;
  Handle<VkDebugUtilsMessengerEXT> messenger_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  VkPhysicalDeviceLimits limits_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  uint32_t queue_family_ = 0;
  uint32_t timestamp_valid_bits_ = 0;
  Handle<VkDevice> device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  Handle<VkCommandPool> command_pool_;
};

// Fills DeviceInfo for one physical device.
DeviceInfo describe_device(VkPhysicalDevice physical, int index);

}  // namespace vk
