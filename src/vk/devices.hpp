// Listing the Vulkan devices of this machine (trainscope devices) and choosing one.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vk/limits.hpp"

namespace vk {

struct MemoryHeapInfo {
  uint64_t bytes = 0;
  bool device_local = false;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::array<unsigned char, 16> uuid{};  // deviceUUID (VkPhysicalDeviceIDProperties): the same device across runs
  uint32_t driver_version = 0;           // VkPhysicalDeviceProperties::driverVersion (vendor-specific encoding)
  std::string type;          // "discrete GPU" | "integrated GPU" | "virtual GPU" | "CPU" | "other"
  bool software = false;     // lavapipe/llvmpipe, SwiftShader: runs on the CPU, label it so (whatever the profile)
  // Which code paths trainscope chooses for it (the GEMM path and tiles, split-K's workgroups): a software device's
  // when true. `software`, unless a device profile says otherwise (desktop-discrete: a GPU's, even on lavapipe).
  bool software_paths = false;
  std::string profile;       // the TRAINSCOPE_DEVICE_PROFILE applied to the figures below, "" when none
  std::string driver;        // driver name and info, e.g. "llvmpipe / Mesa 22.3.6 (LLVM 15.0.6)"
  std::string api_version;   // "1.3.230"
  std::vector<MemoryHeapInfo> heaps;
  uint32_t subgroup_size = 0;
  bool storage_16bit = false;   // VK_KHR_16bit_storage storageBuffer16BitAccess
  bool shader_float16 = false;  // shaderFloat16
  float timestamp_period_ns = 0;  // ns per timestamp tick
  bool timestamps = false;      // the compute queue trainscope uses has timestamps (limits.timestamp_valid_bits > 0)
  uint32_t max_shared_memory = 0;   // maxComputeSharedMemorySize, bytes (= limits.max_shared_memory)
  uint32_t max_workgroup_invocations = 0;
  DeviceLimits limits;          // every limit trainscope checks against (vk/limits.hpp), after the profile
  // Shader cores (NVIDIA SMs, AMD compute units) where the driver reports them: VK_NV_shader_sm_builtins'
  // shaderSMCount, or VK_AMD_shader_core_properties' engines x arrays x units; 0 where it does not (core Vulkan has no
  // such query). Split-K sizes its workgroups from it (gpu::busy_workgroups).
  uint32_t compute_units = 0;
  std::string compute_units_from;  // the extension it came from, "" when 0
};

// Every physical device, in the loader's order (the index is what --device takes), with the device profile of
// TRAINSCOPE_DEVICE_PROFILE applied. Throws core::Error(Vulkan) when there is no loader or no device, saying what to
// install, and core::Error(InvalidArgument) for a bad profile.
std::vector<DeviceInfo> list_devices();

// The same, made once per process (the devices do not change while trainscope runs): what the checks before
// training read (gpu::device_fit_problem). Throws as list_devices().
const std::vector<DeviceInfo>& cached_devices();

// `d` as `profile` sees it: its limits clamped (vk::clamp_limits), the properties the profile names replaced,
// `profile` and the derived fields set. A device without a profile is returned unchanged.
DeviceInfo with_profile(DeviceInfo d, const std::optional<DeviceProfile>& profile);

// Index of the best device: discrete > integrated > virtual > CPU (ties: the first).
int pick_best_device(const std::vector<DeviceInfo>& devices);

// "llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on the CPU]" or just the name for real GPUs; under a
// device profile " [device profile spec-min]" follows.
std::string display_name(const DeviceInfo& d);

}  // namespace vk
