// Set-up steps shared by vk::Context (the trainer's compute device) and vk::GraphicsContext (the dashboard's own
// device): instance, validation messenger, physical device choice, memory types, command pools, one-shot submits.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "vk/devices.hpp"
#include "vk/handle.hpp"

namespace vk {

// Messages from VK_LAYER_KHRONOS_validation, counted by severity (tests fail on any error).
struct ValidationLog {
  std::atomic<int> errors{0};
  std::atomic<int> warnings{0};
  std::mutex mutex;
  std::vector<std::string> first_messages;  // the first few error/warning texts, for test output
};

// The size of an allocation or binding in a message: "4096 bytes" (below 1 MiB), "512.0 MiB", "16.0 GiB".
std::string size_text(VkDeviceSize bytes);

bool has_layer(const char* name);
bool has_instance_extension(const char* name);
bool has_layer_extension(const char* layer, const char* name);  // an instance extension the layer provides
bool has_device_extension(VkPhysicalDevice physical, const char* name);

// The device extensions to enable: every one of `requested` (a missing one throws vk::Error(MissingExtension) naming
// device_name), plus VK_KHR_portability_subset where `available` says the device exposes it, as the spec requires.
inline constexpr const char* kPortabilitySubset = "VK_KHR_portability_subset";
std::vector<std::string> device_extensions_to_enable(const std::vector<std::string>& requested,
                                                     const std::function<bool(const char*)>& available,
                                                     const std::string& device_name);

// A Vulkan 1.2 instance, with portability enumeration where available (VK_KHR_portability_enumeration: without it
// the loader hides portability devices such as MoltenVK's). validation: VK_LAYER_KHRONOS_validation with
// synchronization validation (VK_EXT_validation_features) and VK_EXT_debug_utils (error if the layer is not installed). extensions: further instance extensions (a window
// system's), each required. Throws core::Error(Vulkan) when there is no driver or something is missing.
Handle<VkInstance> create_instance(bool validation, const std::vector<std::string>& extensions = {},
                                   const char* app_name = "trainscope");

// A debug messenger that counts warnings and errors into `log` (and into validation_totals()). `log` must outlive
// the messenger. An empty handle when the instance has no VK_EXT_debug_utils.
Handle<VkDebugUtilsMessengerEXT> create_validation_messenger(VkInstance instance, ValidationLog& log);

// Device `index` of the instance (-1: pick_best_device). Throws vk::Error: NoDevice when there is none, DeviceIndex
// (ErrorKind::InvalidArgument) when the index is out of range.
struct PickedDevice {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceInfo info;
};
PickedDevice pick_physical_device(VkInstance instance, int index);

// A memory type index with all `required` flags (and preferably all `preferred` flags) among type_bits.
// Throws core::Error(Vulkan) naming device_name when none matches.
uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                          VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                          const std::string& device_name);

// A buffer of `bytes` with `usage`, exclusive to one queue family, no memory bound yet. `what` names it in errors;
// a device that cannot hold that many bytes throws vk::Error(OutOfMemory) with bytes() = bytes.
Handle<VkBuffer> create_buffer(VkDevice device, VkDeviceSize bytes, VkBufferUsageFlags usage, const std::string& what);

// `size` bytes of memory type `type_index`. Throws vk::Error; when the device or the host is out of memory
// (Failure::OutOfMemory, bytes() = size) the message says so with the MiB asked for, `what` and `device_name`, e.g.
// "Vulkan: out of GPU memory allocating 512.0 MiB for x_batch on NVIDIA H100" (GiB from 1024 MiB on).
Handle<VkDeviceMemory> allocate_memory(VkDevice device, VkDeviceSize size, uint32_t type_index, const std::string& what,
                                       const std::string& device_name);

// Test-only fault injection (tests/test_run_faults.cpp): after fail_allocation_after(k), the next k calls of
// allocate_memory in this process succeed and the (k+1)-th fails as a real out-of-memory would (vk::Error
// OutOfMemory, "Vulkan: out of GPU memory allocating ..."), once; k < 0 disarms it (the default: never fails).
// allocations_made() counts the successful calls, so a test can find how many buffers a step of work allocates.
// The cost in a normal run is one relaxed atomic load and one increment per allocation (set-up time only).
void fail_allocation_after(long k);
long allocations_made();

// Test-only fault injection of what real GPUs do (tests/test_run_faults.cpp; TRAINSCOPE_INJECT_FAULT for the
// command line and the window): after inject_device_lost_after(k) the next k training-step submissions succeed and
// the (k+1)-th gets VK_ERROR_DEVICE_LOST, as from a driver that reset the GPU (a Windows TDR after ~2 s); after
// inject_fence_timeout_after(k) the (k+1)-th wait for a training step's fence gets VK_TIMEOUT, as from a hung GPU.
// Once each; k < 0 disarms. injected_*() say whether this submission / wait is the injected failure (and disarm it).
// TRAINSCOPE_INJECT_FAULT=device-lost@K, fence-timeout@K or validation-message (the next Device made with the
// validation layer provokes one real message of it: a buffer of size 0) arms them once per process, at the first
// call of any of these functions; another value throws core::Error(InvalidArgument). One relaxed atomic load per
// submission or wait when nothing is armed.
void inject_device_lost_after(long k);
void inject_fence_timeout_after(long k);
bool injected_device_lost();
bool injected_fence_timeout();
bool injected_validation_message();
// Reads TRAINSCOPE_INJECT_FAULT now (main, before any command: a bad value is bad input, exit 2, not a backend's
// failure later). Throws core::Error(InvalidArgument).
void check_fault_environment();

// A command pool whose buffers can be reset one by one.
Handle<VkCommandPool> create_command_pool(VkDevice device, uint32_t queue_family);

}  // namespace vk
