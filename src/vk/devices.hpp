// Listing the Vulkan devices of this machine (trainscope devices) and choosing one.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

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
  bool software = false;     // lavapipe/llvmpipe, SwiftShader: runs on the CPU, label it so
  std::string driver;        // driver name and info, e.g. "llvmpipe / Mesa 22.3.6 (LLVM 15.0.6)"
  std::string api_version;   // "1.3.230"
  std::vector<MemoryHeapInfo> heaps;
  uint32_t subgroup_size = 0;
  bool storage_16bit = false;   // VK_KHR_16bit_storage storageBuffer16BitAccess
  bool shader_float16 = false;  // shaderFloat16
  float timestamp_period_ns = 0;  // ns per timestamp tick
  bool timestamps = false;      // compute queue supports timestamps
  uint32_t max_shared_memory = 0;   // maxComputeSharedMemorySize, bytes
  uint32_t max_workgroup_invocations = 0;
  // Shader cores (NVIDIA SMs, AMD compute units) where the driver reports them: VK_NV_shader_sm_builtins'
  // shaderSMCount, or VK_AMD_shader_core_properties' engines x arrays x units; 0 where it does not (core Vulkan has no
  // such query). Split-K sizes its workgroups from it (gpu::busy_workgroups).
  uint32_t compute_units = 0;
  std::string compute_units_from;  // the extension it came from, "" when 0
};

// Every physical device, in the loader's order (the index is what --device takes).
// Throws core::Error(Vulkan) when there is no loader or no device, saying what to install.
std::vector<DeviceInfo> list_devices();

// Index of the best device: discrete > integrated > virtual > CPU (ties: the first).
int pick_best_device(const std::vector<DeviceInfo>& devices);

// "llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on the CPU]" or just the name for real GPUs.
std::string display_name(const DeviceInfo& d);

}  // namespace vk
