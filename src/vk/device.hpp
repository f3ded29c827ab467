// vk::Device: what every Vulkan context of trainscope is: an instance (with the validation layer and a messenger that
// counts its messages, when asked), the chosen physical device, one logical device with one queue of the kind asked
// for, and a command pool. The trainers' compute context (vk::Context) and the dashboard's own graphics context
// (vk::GraphicsContext) are two configurations of it.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vk/devices.hpp"
#include "vk/handle.hpp"
#include "vk/limits.hpp"
#include "vk/setup.hpp"

namespace vk {

// One kind of validation message (same severity and message ID): its first text and how often it came.
struct ValidationMessage {
  bool error = false;
  std::string id;    // the layer's message ID name, e.g. "VUID-VkBufferCreateInfo-size-00912"
  std::string text;  // the first message of this kind, as the layer wrote it
  long count = 0;
};

// Totals over every Device of the process (tests check that contexts they cannot reach, such as the trainers',
// reported nothing): counts by severity, the first few texts, and each distinct message with its count.
struct ValidationTotals {
  int errors = 0;
  int warnings = 0;
  std::vector<std::string> first_messages;  // "[error] ..." / "[warning] ...", at most 16
  std::vector<ValidationMessage> distinct;  // in order of first appearance; at most kMaxDistinct kinds kept
  static constexpr size_t kMaxDistinct = 256;
};
ValidationTotals validation_totals();

// What `train --validation` prints at the end: the totals, then each distinct message once with its count, e.g.
//   Vulkan validation: 3 errors, 0 warnings (1 distinct message)
//     [error] 3x VUID-VkBufferCreateInfo-size-00912: <the layer's text>
// or "Vulkan validation: no errors, no warnings". Ends with a newline.
std::string describe_validation(const ValidationTotals& totals);

// --validation is a gate: true when the layer reported anything (an error or a warning), and then *why (if given)
// says so in one line: "the Vulkan validation layer reported 2 errors and 0 warnings: each is listed above; a run
// under --validation fails on any message".
bool validation_failed(const ValidationTotals& totals, std::string* why = nullptr);

struct DeviceOptions {
  int device_index = -1;                         // -1: pick_best_device
  bool validation = false;                       // VK_LAYER_KHRONOS_validation; an error if it is not installed
  const char* app_name = "trainscope";
  std::vector<std::string> instance_extensions;  // each required (a window system's surface extensions)
  std::vector<std::string> device_extensions;    // each required (VK_KHR_swapchain)
  VkQueueFlags queue = VK_QUEUE_COMPUTE_BIT;     // the queue family must have these
  VkQueueFlags queue_preferred = 0;              // and preferably these too
  // When set, the queue family must also pass this test (a window's present support).
  std::function<bool(VkInstance, VkPhysicalDevice, uint32_t family)> can_present;
  bool sixteen_bit = false;  // enable the 16-bit storage and shaderFloat16 features the device has
  // The device profile to apply (vk/limits.hpp); nullopt: TRAINSCOPE_DEVICE_PROFILE's, if set.
  std::optional<DeviceProfile> profile;
};

class Device {
 public:
  // Throws vk::Error: no driver or device (NoDevice), an index out of range (DeviceIndex), a missing layer or
  // extension, no queue of the kind asked for (Unsupported), a failed call.
  explicit Device(const DeviceOptions& options);
  ~Device();  // waits until this device is idle (never another device's queues)
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkInstance instance() const { return instance_.get(); }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_.get(); }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return command_pool_.get(); }
  // The device as trainscope sees it: its limits are those of the queue family in use, after the device profile.
  const DeviceInfo& info() const { return info_; }
  const DeviceLimits& limits() const { return info_.limits; }
  uint32_t timestamp_valid_bits() const { return info_.limits.timestamp_valid_bits; }  // of the queue's family

  // A raw timestamp query result as ticks of a 64-bit clock: masked to timestamp_valid_bits() and with its
  // wrap-arounds undone (vk::unwrap_timestamp against the host's steady clock), so that step start times keep
  // increasing across a wrap. Under a profile with timestamps_near_wrap the counter reads as if it had started 0.5 s
  // before its wrap. masked_ticks(): the same offset and mask only (what intervals are computed from).
  uint64_t masked_ticks(uint64_t raw);
  uint64_t clock_ticks(uint64_t masked);
  const ValidationLog& validation_log() const { return *validation_log_; }

  // A memory type index with all `required` flags (and preferably all `preferred` flags) among type_bits.
  // Throws vk::Error(Unsupported) when none matches.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

  // Records with `record`, submits to this device's queue and waits, at most kOneShotTimeoutS (set-up work only:
  // uploads, downloads, evaluation, the font atlas; never inside a training step). Throws as check() and wait().
  void run_one_shot(const std::function<void(VkCommandBuffer)>& record);
  static constexpr double kOneShotTimeoutS = 600;

  // What became of the device: Ok; Lost when a call reported VK_ERROR_DEVICE_LOST (nothing more can run on it; its
  // objects may be destroyed); Hung when a wait for it timed out (it may still be running work, so what that work
  // uses must not be freed). A device that is not Ok is never used again: gpu::DeviceCache makes a new one.
  enum class Health { Ok, Lost, Hung };
  Health health() const { return health_.load(); }
  void mark(Health health);  // Lost or Hung (a Hung device that reports DEVICE_LOST becomes Lost)
  // vk::check, marking the device Lost first on VK_ERROR_DEVICE_LOST.
  void check(VkResult result, const char* what);
  // Waits for `fence` at most timeout_s seconds (never unbounded). A timeout marks the device Hung and throws
  // vk::Error(Timeout): "Vulkan: the GPU did not finish <what> within <N> s (a hung GPU or driver)"; a lost device
  // throws vk::Error(DeviceLost). Where `injectable` (a training step's fence), TRAINSCOPE_INJECT_FAULT /
  // vk::inject_fence_timeout_after make the wait time out.
  void wait(VkFence fence, double timeout_s, const std::string& what, bool injectable = false);

 private:
  std::unique_ptr<ValidationLog> validation_log_;  // first: it outlives the messenger that writes into it
  Handle<VkInstance> instance_;
  Handle<VkDebugUtilsMessengerEXT> messenger_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_{};
  uint32_t queue_family_ = 0;
  // The timestamp clock (masked_ticks, clock_ticks): the near-wrap offset, and the last reading on both clocks.
  std::mutex clock_mutex_;
  std::optional<uint64_t> near_wrap_offset_;
  std::optional<uint64_t> last_ticks_;
  double last_ticks_host_s_ = 0;
  std::atomic<Health> health_{Health::Ok};
  Handle<VkDevice> device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  Handle<VkCommandPool> command_pool_;
};

// Fills DeviceInfo for one physical device.
DeviceInfo describe_device(VkPhysicalDevice physical, int index);

}  // namespace vk
