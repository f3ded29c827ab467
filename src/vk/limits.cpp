// Reading a device's limits, the built-in and JSON device profiles that clamp them, and the timestamp unwrapping.
#include "vk/limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "vk/setup.hpp"

namespace vk {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;

[[noreturn]] void bad_profile(const std::string& message) {
  throw core::Error(core::ErrorKind::InvalidArgument, "TRAINSCOPE_DEVICE_PROFILE: " + message);
}

// A limit lowered to the profile's value (0: the profile leaves it).
template <typename T>
T lowered(T device, T profile) {
  return profile ? std::min(device, profile) : device;
}

// The JSON keys of the limits, by the Vulkan names.
template <typename F>
void for_each_limit_key(DeviceLimits& l, F&& f) {
  f("maxStorageBufferRange", l.max_storage_buffer_range);
  f("maxMemoryAllocationSize", l.max_memory_allocation_size);
  f("maxBufferSize", l.max_buffer_size);
  f("deviceLocalHeapSize", l.device_local_heap);
  f("maxTexelBufferElements", l.max_texel_buffer_elements);
  f("minStorageBufferOffsetAlignment", l.min_storage_buffer_offset_alignment);
  f("minTexelBufferOffsetAlignment", l.min_texel_buffer_offset_alignment);
  f("maxPushConstantsSize", l.max_push_constants_size);
  f("maxPerStageDescriptorStorageBuffers", l.max_per_stage_storage_buffers);
  f("maxPerStageDescriptorSampledImages", l.max_per_stage_sampled_images);
  f("maxComputeSharedMemorySize", l.max_shared_memory);
  f("maxComputeWorkGroupInvocations", l.max_workgroup_invocations);
  f("timestampValidBits", l.timestamp_valid_bits);
}

// The profile's text as JSON, a key given twice in one object refused, as lessons refuse it (JSON would keep the last
// one silently). A profile is one flat object with one array level, so the keys of each open object are few.
nlohmann::json parse_profile_json(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    std::vector<std::set<std::string>> keys;
    j = nlohmann::json::parse(text, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if (event == Event::object_start) keys.emplace_back();
      if (event == Event::object_end && !keys.empty()) keys.pop_back();
      if (event == Event::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
        std::string key = parsed.get<std::string>();
        if (key.size() > 80) key = key.substr(0, 80) + "...";
        for (char& c : key)
          if (static_cast<unsigned char>(c) < 0x20) c = '?';  // one line
        bad_profile(fmt::format("{}: \"{}\" is given twice in one object; give each key once", path, key));
      }
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    bad_profile(fmt::format("{} is not valid JSON ({})", path, e.what()));
  }
  return j;
}

// One key of a profile into `p`: a limit (for_each_limit_key), the workgroup size or count, or a feature.
void read_profile_key(DeviceProfile& p, const std::string& key, const nlohmann::json& value, const std::string& path) {
  auto number = [&](auto& field) {
    using T = std::decay_t<decltype(field)>;
    if (!value.is_number_unsigned() || value.get<uint64_t>() > std::numeric_limits<T>::max())
      bad_profile(fmt::format("{}: \"{}\" must be a whole number from 0 to {}", path, key,
                              std::numeric_limits<T>::max()));
    field = static_cast<T>(value.get<uint64_t>());
  };
  auto boolean = [&]() {
    if (!value.is_boolean()) bad_profile(fmt::format("{}: \"{}\" must be true or false", path, key));
    return value.get<bool>();
  };
  bool known = false;
  for_each_limit_key(p.limits, [&](const char* name, auto& field) {
    if (key == name) {
      number(field);
      known = true;
    }
  });
  if (known) return;
  if (key == "maxComputeWorkGroupSize" || key == "maxComputeWorkGroupCount") {
    auto& field = key == "maxComputeWorkGroupSize" ? p.limits.max_workgroup_size : p.limits.max_workgroup_count;
    if (!value.is_array() || value.size() != 3)
      bad_profile(fmt::format("{}: \"{}\" must be an array of 3 whole numbers", path, key));
    for (size_t i = 0; i < 3; ++i) {
      if (!value[i].is_number_unsigned() || value[i].get<uint64_t>() > UINT32_MAX)
        bad_profile(fmt::format("{}: \"{}\" must be an array of 3 whole numbers", path, key));
      field[i] = value[i].get<uint32_t>();
    }
  } else if (key == "name") {
    if (!value.is_string()) bad_profile(fmt::format("{}: \"name\" must be a string", path));
    p.name = value.get<std::string>();
  } else if (key == "timestampComputeAndGraphics") {
    p.no_compute_and_graphics_timestamps = !boolean();
  } else if (key == "timestampsNearWrap") {
    p.limits.timestamps_near_wrap = boolean();
  } else if (key == "software") {
    p.software = boolean();
  } else if (key == "shaderFloat16") {
    p.shader_float16 = boolean();
  } else if (key == "storageBuffer16BitAccess") {
    p.storage_16bit = boolean();
  } else if (key == "computeUnits") {
    uint32_t units = 0;
    number(units);
    p.compute_units = units;
  } else {
    bad_profile(fmt::format("{}: unknown key \"{}\" (the keys are Vulkan's limit names, e.g. maxStorageBufferRange, "
                            "and name, software, computeUnits, shaderFloat16, storageBuffer16BitAccess, "
                            "timestampComputeAndGraphics, timestampsNearWrap; docs/gpu.md, \"Device profiles\")",
                            path, key));
  }
}

}  // namespace

DeviceProfile parse_profile(const std::string& text, const std::string& path) {
  const nlohmann::json j = parse_profile_json(text, path);
  if (!j.is_object()) bad_profile(path + " must hold one JSON object of limits, e.g. {\"maxStorageBufferRange\": 134217728}");
  DeviceProfile p;
  p.name = path;
  for (const auto& item : j.items()) read_profile_key(p, item.key(), item.value(), path);
  // timestampValidBits 0 in a file: no timestamps on trainscope's queue (0 elsewhere means "not clamped"). Vulkan
  // allows only 0 or 36..64 (the spec's "Valid Usage" of VkQueueFamilyProperties: at least 36 bits where there are
  // timestamps); 1 bit gave negative kernel shares and millions of GFLOP/s.
  if (j.contains("timestampValidBits")) {
    const uint32_t bits = p.limits.timestamp_valid_bits;
    if (bits != 0 && (bits < 36 || bits > 64))
      bad_profile(fmt::format("{}: \"timestampValidBits\" {} is not a value Vulkan allows: 0 (no timestamps) or "
                              "36..64",
                              path, bits));
    if (bits == 0) p.no_timestamps = true;
  }
  return p;
}

std::optional<DeviceProfile> builtin_profile(const std::string& name) {
  DeviceProfile p;
  p.name = name;
  DeviceLimits& l = p.limits;
  if (name == "spec-min") {
    l.max_storage_buffer_range = 128 * kMiB;
    l.max_memory_allocation_size = kGiB;
    l.max_buffer_size = kGiB;
    l.max_texel_buffer_elements = 65536;
    l.min_storage_buffer_offset_alignment = 256;
    l.min_texel_buffer_offset_alignment = 256;
    l.max_push_constants_size = 128;
    l.max_shared_memory = 16384;
    l.max_workgroup_invocations = 128;
    l.max_workgroup_size = {128, 128, 64};
    l.max_workgroup_count = {65535, 65535, 65535};
    l.timestamp_valid_bits = 36;
    l.timestamps_near_wrap = true;
    p.shader_float16 = false;
    return p;
  }
  if (name == "desktop-discrete") {
    l.max_storage_buffer_range = 4 * kGiB - 1;
    l.max_memory_allocation_size = 4 * kGiB - 1;
    l.max_shared_memory = 49152;
    l.max_workgroup_invocations = 1024;
    l.max_workgroup_size = {1024, 1024, 64};
    l.max_workgroup_count = {2147483647, 65535, 65535};
    p.software = false;
    p.compute_units = 64;
    return p;
  }
  return std::nullopt;
}

std::optional<DeviceProfile> profile_from_environment() {
  static std::mutex mutex;
  static std::optional<std::optional<DeviceProfile>> cached;  // read once: a file read mid-run could change
  std::lock_guard lock(mutex);
  if (cached) return *cached;
  const char* env = std::getenv("TRAINSCOPE_DEVICE_PROFILE");
  if (!env || !*env) return *(cached = std::optional<DeviceProfile>{});
  const std::string value = env;
  if (auto p = builtin_profile(value)) return *(cached = p);
  std::error_code ec;
  if (!std::filesystem::exists(value, ec))
    bad_profile(fmt::format("'{}' is neither a built-in profile (spec-min, desktop-discrete) nor a file", value));
  std::string text;
  try {
    text = core::read_regular_file(value, core::kMaxSmallFileBytes, "device profile");
  } catch (const core::Error& e) {
    bad_profile(e.what());
  }
  return *(cached = parse_profile(text, value));
}

DeviceLimits read_limits(VkPhysicalDevice physical, int family) {
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  // maintenance4 is chained only where the device has it (a Vulkan 1.2 instance may not name a 1.3 structure).
  const bool has_m4 = has_device_extension(physical, VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  if (has_m4) m3.pNext = &m4;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &m3;
  vkGetPhysicalDeviceProperties2(physical, &props);
  const VkPhysicalDeviceLimits& v = props.properties.limits;
  DeviceLimits l;
  l.max_storage_buffer_range = v.maxStorageBufferRange;
  l.max_memory_allocation_size = m3.maxMemoryAllocationSize;
  l.max_buffer_size = has_m4 ? m4.maxBufferSize : m3.maxMemoryAllocationSize;  // a buffer sits in one allocation
  l.max_texel_buffer_elements = v.maxTexelBufferElements;
  l.min_storage_buffer_offset_alignment = static_cast<uint32_t>(v.minStorageBufferOffsetAlignment);
  l.min_texel_buffer_offset_alignment = static_cast<uint32_t>(v.minTexelBufferOffsetAlignment);
  l.max_push_constants_size = v.maxPushConstantsSize;
  l.max_per_stage_storage_buffers = v.maxPerStageDescriptorStorageBuffers;
  l.max_per_stage_sampled_images = v.maxPerStageDescriptorSampledImages;
  l.max_shared_memory = v.maxComputeSharedMemorySize;
  l.max_workgroup_invocations = v.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    l.max_workgroup_size[i] = v.maxComputeWorkGroupSize[i];
    l.max_workgroup_count[i] = v.maxComputeWorkGroupCount[i];
  }
  l.timestamp_period_ns = v.timestampPeriod;
  l.timestamp_compute_and_graphics = v.timestampComputeAndGraphics;

  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
    if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      l.device_local_heap = std::max<uint64_t>(l.device_local_heap, memory.memoryHeaps[h].size);

  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  if (family < 0) {
    for (int pass = 0; pass < 2 && family < 0; ++pass)
      for (uint32_t f = 0; f < count && family < 0; ++f) {
        const VkQueueFlags want = pass == 0 ? VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT : VK_QUEUE_COMPUTE_BIT;
        if ((families[f].queueFlags & want) == want) family = static_cast<int>(f);
      }
  }
  if (family >= 0 && static_cast<uint32_t>(family) < count && l.timestamp_period_ns > 0)
    l.timestamp_valid_bits = families[static_cast<size_t>(family)].timestampValidBits;
  return l;
}

DeviceLimits clamp_limits(const DeviceLimits& d, const DeviceProfile& profile) {
  const DeviceLimits& p = profile.limits;
  DeviceLimits l = d;
  l.max_storage_buffer_range = lowered(d.max_storage_buffer_range, p.max_storage_buffer_range);
  l.max_memory_allocation_size = lowered(d.max_memory_allocation_size, p.max_memory_allocation_size);
  l.max_buffer_size = lowered(d.max_buffer_size, p.max_buffer_size);
  l.device_local_heap = lowered(d.device_local_heap, p.device_local_heap);
  l.max_texel_buffer_elements = lowered(d.max_texel_buffer_elements, p.max_texel_buffer_elements);
  l.min_storage_buffer_offset_alignment =
      std::max(d.min_storage_buffer_offset_alignment, p.min_storage_buffer_offset_alignment);
  l.min_texel_buffer_offset_alignment = std::max(d.min_texel_buffer_offset_alignment, p.min_texel_buffer_offset_alignment);
  l.max_push_constants_size = lowered(d.max_push_constants_size, p.max_push_constants_size);
  l.max_per_stage_storage_buffers = lowered(d.max_per_stage_storage_buffers, p.max_per_stage_storage_buffers);
  l.max_per_stage_sampled_images = lowered(d.max_per_stage_sampled_images, p.max_per_stage_sampled_images);
  l.max_shared_memory = lowered(d.max_shared_memory, p.max_shared_memory);
  l.max_workgroup_invocations = lowered(d.max_workgroup_invocations, p.max_workgroup_invocations);
  for (int i = 0; i < 3; ++i) {
    l.max_workgroup_size[i] = lowered(d.max_workgroup_size[i], p.max_workgroup_size[i]);
    l.max_workgroup_count[i] = lowered(d.max_workgroup_count[i], p.max_workgroup_count[i]);
  }
  // Timestamps: fewer valid bits (a device's 0 stays 0: none), or none at all on trainscope's queue.
  l.timestamp_valid_bits = profile.no_timestamps ? 0 : lowered(d.timestamp_valid_bits, p.timestamp_valid_bits);
  l.timestamp_compute_and_graphics = d.timestamp_compute_and_graphics && !profile.no_compute_and_graphics_timestamps &&
                                     !profile.no_timestamps;
  l.timestamps_near_wrap = d.timestamps_near_wrap || p.timestamps_near_wrap;
  return l;
}

uint64_t unwrap_timestamp(uint64_t masked, uint32_t valid_bits, double period_ns, std::optional<uint64_t> previous,
                          double host_seconds_since) {
  if (valid_bits >= 64 || !previous) return masked;
  const uint64_t wrap = uint64_t{1} << valid_bits, mask = wrap - 1;
  const uint64_t delta = (masked - (*previous & mask)) & mask;  // ticks past the previous reading, modulo the wrap
  // Whole wraps in between, from the host's clock: the elapsed ticks it implies, less what delta already counts.
  const double elapsed_ticks = period_ns > 0 ? std::max(0.0, host_seconds_since) * 1e9 / period_ns : 0.0;
  const double wraps = std::round((elapsed_ticks - static_cast<double>(delta)) / static_cast<double>(wrap));
  return *previous + delta + (wraps > 0 ? static_cast<uint64_t>(wraps) * wrap : 0);
}

}  // namespace vk
