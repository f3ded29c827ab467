// Describing the machine's Vulkan devices and choosing the best one.
#include "vk/devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "vk/context.hpp"
#include "vk/setup.hpp"

namespace vk {

static const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

static int type_rank(const std::string& type) {
  if (type == "discrete GPU") return 0;
  if (type == "integrated GPU") return 1;
  if (type == "virtual GPU") return 2;
  if (type == "CPU") return 3;
  return 4;
}

DeviceInfo describe_device(VkPhysicalDevice physical, int index) {
  DeviceInfo d;
  d.index = index;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  driver.pNext = &id;
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  // The shader cores, where a vendor extension reports them (chained only when the device has it).
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  const bool has_nv = has_device_extension(physical, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  const bool has_amd = has_device_extension(physical, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
  if (has_nv) {
    nv.pNext = props.pNext;
    props.pNext = &nv;
  }
  if (has_amd) {
    amd.pNext = props.pNext;
    props.pNext = &amd;
  }
  vkGetPhysicalDeviceProperties2(physical, &props);
  const uint32_t amd_units = amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray;
  if (has_nv && nv.shaderSMCount > 0) {
    d.compute_units = nv.shaderSMCount;
    d.compute_units_from = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
  } else if (has_amd && amd_units > 0) {
    d.compute_units = amd_units;
    d.compute_units_from = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
  }
  const auto& p = props.properties;
  d.name = p.deviceName;
  std::copy(std::begin(id.deviceUUID), std::end(id.deviceUUID), d.uuid.begin());
  d.driver_version = p.driverVersion;
  d.type = type_name(p.deviceType);
  d.driver = fmt::format("{} ({})", driver.driverName, driver.driverInfo);
  d.api_version = fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
                              VK_API_VERSION_PATCH(p.apiVersion));
  // Software rasterizers implemented on the CPU: their numbers must never be mistaken for a GPU's.
  d.software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU || driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ||
               driver.driverID == VK_DRIVER_ID_GOOGLE_SWIFTSHADER;
  d.software_paths = d.software;
  d.subgroup_size = subgroup.subgroupSize;
  d.limits = read_limits(physical);

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  d.storage_16bit = f11.storageBuffer16BitAccess;
  d.shader_float16 = f12.shaderFloat16;

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical, &mem);
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    d.heaps.push_back({mem.memoryHeaps[h].size, (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  return with_profile(std::move(d), std::nullopt);  // the derived fields
}

DeviceInfo with_profile(DeviceInfo d, const std::optional<DeviceProfile>& profile) {
  if (profile) {
    d.profile = profile->name;
    d.limits = clamp_limits(d.limits, *profile);
    if (profile->software) d.software_paths = *profile->software;
    if (profile->compute_units) {
      d.compute_units = *profile->compute_units;
      d.compute_units_from = "device profile " + profile->name;
    }
    // Features only ever taken away: a profile cannot give the device what it lacks.
    if (profile->shader_float16) d.shader_float16 = d.shader_float16 && *profile->shader_float16;
    if (profile->storage_16bit) d.storage_16bit = d.storage_16bit && *profile->storage_16bit;
  }
  d.timestamp_period_ns = d.limits.timestamp_period_ns;
  d.timestamps = d.limits.timestamp_valid_bits > 0 && d.limits.timestamp_period_ns > 0;
  d.max_shared_memory = d.limits.max_shared_memory;
  d.max_workgroup_invocations = d.limits.max_workgroup_invocations;
  return d;
}

std::vector<DeviceInfo> list_devices() {
  Handle<VkInstance> instance = create_instance(false);
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance.get(), &count, nullptr);
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(instance.get(), &count, physicals.data());
  if (count == 0)
    throw Error(Failure::NoDevice,
                "Vulkan: no Vulkan device found: install mesa-vulkan-drivers (lavapipe) or your GPU's driver");
  const std::optional<DeviceProfile> profile = profile_from_environment();
  std::vector<DeviceInfo> devices;
  for (uint32_t i = 0; i < count; ++i)
    devices.push_back(with_profile(describe_device(physicals[i], static_cast<int>(i)), profile));
  return devices;
}

const std::vector<DeviceInfo>& cached_devices() {
  static std::mutex mutex;
  static std::optional<std::vector<DeviceInfo>> devices;
  std::lock_guard lock(mutex);
  if (!devices) devices = list_devices();  // a failure is thrown, and tried again at the next call
  return *devices;
}

int pick_best_device(const std::vector<DeviceInfo>& devices) {
  int best = 0;
  for (size_t i = 1; i < devices.size(); ++i)
    if (type_rank(devices[i].type) < type_rank(devices[best].type)) best = static_cast<int>(i);
  return best;
}

std::string display_name(const DeviceInfo& d) {
  std::string name = d.name;
  if (d.software) name += " [software Vulkan: runs on the CPU]";
  if (!d.profile.empty()) name += " [device profile " + d.profile + "]";
  return name;
}

}  // namespace vk
