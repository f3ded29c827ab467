// vk::DeviceLimits: the one place that knows what a Vulkan device allows trainscope to do: every limit and property
// that a buffer, a binding, a dispatch, a workgroup, a shared-memory tile or a timestamp of trainscope is checked
// against, read once per device. A device profile (TRAINSCOPE_DEVICE_PROFILE) clamps them to another device class,
// so that the paths of real GPUs run, and are tested, on any device: it only ever lowers a limit below what the device
// underneath has (a minimum alignment only ever rises), so whatever runs under a profile is valid on that device.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace vk {

struct DeviceLimits {
  uint64_t max_storage_buffer_range = 0;    // maxStorageBufferRange: the most bytes one storage binding sees
  uint64_t max_memory_allocation_size = 0;  // maxMemoryAllocationSize (Vulkan 1.1): the largest one allocation
  uint64_t max_buffer_size = 0;             // maxBufferSize (VK_KHR_maintenance4); the allocation size elsewhere
  uint64_t device_local_heap = 0;           // bytes of the largest device-local memory heap
  uint32_t max_texel_buffer_elements = 0;   // maxTexelBufferElements: texels of one texel-buffer view
  uint32_t min_storage_buffer_offset_alignment = 1;  // bytes; a binding's offset is a multiple of it
  uint32_t min_texel_buffer_offset_alignment = 1;
  uint32_t max_push_constants_size = 0;              // bytes
  uint32_t max_per_stage_storage_buffers = 0;        // maxPerStageDescriptorStorageBuffers
  uint32_t max_per_stage_sampled_images = 0;         // maxPerStageDescriptorSampledImages (texel buffers count here)
  uint32_t max_shared_memory = 0;                    // maxComputeSharedMemorySize, bytes
  uint32_t max_workgroup_invocations = 0;            // maxComputeWorkGroupInvocations
  std::array<uint32_t, 3> max_workgroup_size{};      // maxComputeWorkGroupSize
  std::array<uint32_t, 3> max_workgroup_count{};     // maxComputeWorkGroupCount
  float timestamp_period_ns = 0;                     // timestampPeriod: ns per tick
  // timestampValidBits of the queue family trainscope computes on (0: no timestamps there), and whether every
  // compute and graphics queue has them (timestampComputeAndGraphics; when not, only the families with
  // timestampValidBits > 0 do).
  uint32_t timestamp_valid_bits = 0;
  bool timestamp_compute_and_graphics = false;
  // A profile's: the timestamp counter is read as if it had started just below its wrap-around (2^bits), so that a
  // run crosses the wrap within its first second, as a 36-bit counter does every 69 s at 1 ns per tick.
  bool timestamps_near_wrap = false;

  bool operator==(const DeviceLimits&) const = default;
};

// What a device profile sets (TRAINSCOPE_DEVICE_PROFILE=NAME or a JSON file): each limit it names is clamped to at
// most that value (alignments: at least), each property it names replaces the device's, where the device has it.
struct DeviceProfile {
  std::string name;                 // "spec-min", "desktop-discrete", or the JSON file's "name" (else its path)
  DeviceLimits limits;              // 0 (false) = not clamped; alignments: 0 = not raised
  std::optional<bool> software;     // false: take a GPU's code paths even on a software device (GEMM tiling, split-K)
  std::optional<uint32_t> compute_units;  // the shader cores split-K fills (vk::DeviceInfo::compute_units)
  std::optional<bool> shader_float16;     // false: no fp16 arithmetic (the device's own otherwise)
  std::optional<bool> storage_16bit;      // false: no 16-bit storage buffers (so no fp16/bf16 training)
  bool no_timestamps = false;             // "timestampValidBits": 0: no timestamps on trainscope's compute queue
  bool no_compute_and_graphics_timestamps = false;  // "timestampComputeAndGraphics": false
};

// The built-in profiles:
//   spec-min: Vulkan 1.3's required limits ("Required Limits" table): 128 MiB storage range, 16 KiB shared memory,
//     128 invocations (128 x 128 x 64), 65535 workgroups per dimension, 65536 texels per view, 1 GiB allocations
//     and buffers, 256-byte offset alignments, 36-bit timestamps started near the wrap, no shaderFloat16. The
//     descriptor counts stay the device's own (the spec's 4 storage buffers per stage are fewer than one kernel
//     binds; they are checked against what the device reports).
//   desktop-discrete: a discrete desktop GPU (what NVIDIA and AMD report: 4 GiB storage range and allocations,
//     48 KiB shared memory, 1024 invocations, 64-bit timestamps) that is not a software device and has 64 compute
//     units: the GPU GEMM tiling and split-K choices are made as on such a GPU.
// Returns nullopt for another name.
std::optional<DeviceProfile> builtin_profile(const std::string& name);

// The profile TRAINSCOPE_DEVICE_PROFILE names (a built-in name, or the path of a JSON file whose keys are the Vulkan
// names of the limits above, plus "name", "software", "computeUnits", "shaderFloat16", "storageBuffer16BitAccess",
// "timestampsNearWrap"), or nullopt when it is unset or empty. Throws core::Error(InvalidArgument) with one line
// saying what is wrong (an unknown name that is no file, a file that is not such a JSON object, a key it does not
// know, a value of the wrong type); read once per process.
std::optional<DeviceProfile> profile_from_environment();

// A profile from the text of a JSON file (path: for messages, and the name unless the file gives one). Throws as
// profile_from_environment().
DeviceProfile parse_profile(const std::string& json, const std::string& path);

// The device's own limits: its VkPhysicalDeviceLimits, maintenance3/4 properties and memory heaps, and the
// timestamp bits of the queue family `family` (the first compute family that also does graphics, else the first
// compute family, when `family` is -1: the one vk::Context picks).
DeviceLimits read_limits(VkPhysicalDevice physical, int family = -1);

// `limits` clamped by `profile` (lowered, alignments raised; never beyond the device's own).
DeviceLimits clamp_limits(const DeviceLimits& limits, const DeviceProfile& profile);

// The timestamp clock with its wrap-around undone: `masked` is a raw timestamp masked to `valid_bits`; the result
// counts ticks since some origin on 64 bits, continuing `previous` (the last result, read `host_seconds_since`
// seconds before on the host's clock). How many times the counter wrapped in between is taken from the host's clock
// (the two clocks run at the same rate), so a pause longer than one wrap period is still counted right. The first
// call passes previous = nullopt. A pure function; vk::Device keeps the state of its queue's clock.
uint64_t unwrap_timestamp(uint64_t masked, uint32_t valid_bits, double period_ns, std::optional<uint64_t> previous,
                          double host_seconds_since);

}  // namespace vk
