// Pipeline caches: file names per device and driver, the header check, creation from saved bytes.
#include "vk/pipeline_cache.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace vk {
namespace {

// VkPipelineCacheHeaderVersionOne (Vulkan spec, "Pipeline Cache"): headerSize, headerVersion, vendorID, deviceID
// as little-endian uint32, then the 16-byte pipelineCacheUUID; 32 bytes in all.
constexpr size_t kHeaderBytes = 16 + VK_UUID_SIZE;

uint32_t read_u32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

std::string pipeline_cache_file_name(const VkPhysicalDeviceProperties& device) {
  std::string uuid;
  for (uint8_t b : device.pipelineCacheUUID) uuid += fmt::format("{:02x}", b);
  return fmt::format("pipelines-{:04x}-{:04x}-{:x}-{}.bin", device.vendorID, device.deviceID, device.driverVersion,
                     uuid);
}

bool pipeline_cache_header_matches(const std::vector<unsigned char>& data, const VkPhysicalDeviceProperties& device) {
  if (data.size() < kHeaderBytes) return false;
  const unsigned char* p = data.data();
  return read_u32(p) == kHeaderBytes && read_u32(p + 4) == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         read_u32(p + 8) == device.vendorID && read_u32(p + 12) == device.deviceID &&
         std::memcmp(p + 16, device.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

PipelineCache::PipelineCache(Context& ctx, const std::vector<unsigned char>& initial) : device_(ctx.device()) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physical_device(), &props);
  const unsigned char* seed = nullptr;
  size_t seed_bytes = 0;
  if (!initial.empty()) {
    if (initial.size() > kMaxPipelineCacheBytes)
      note_ = fmt::format("larger than {} MiB", kMaxPipelineCacheBytes >> 20);
    else if (!pipeline_cache_header_matches(initial, props))
      note_ = "not a pipeline cache of this device";
    else
      seed = initial.data(), seed_bytes = initial.size();
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = seed_bytes;
  ci.pInitialData = seed;
  VkPipelineCache cache = VK_NULL_HANDLE;
  VkResult r = vkCreatePipelineCache(device_, &ci, nullptr, &cache);
  if (r != VK_SUCCESS && seed) {  // a driver that still rejects the bytes (a corrupt body): start empty
    note_ = "the driver rejected it";
    seed_bytes = 0;
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    r = vkCreatePipelineCache(device_, &ci, nullptr, &cache);
  }
  check(r, "vkCreatePipelineCache");
  VkDevice dev = device_;
  cache_ = Handle<VkPipelineCache>(cache, [dev](VkPipelineCache c) { vkDestroyPipelineCache(dev, c, nullptr); });
  loaded_bytes_ = seed_bytes;
}

std::vector<unsigned char> PipelineCache::data() const {
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, cache_.get(), &size, nullptr) != VK_SUCCESS) return {};
  std::vector<unsigned char> bytes(size);
  if (vkGetPipelineCacheData(device_, cache_.get(), &size, bytes.data()) != VK_SUCCESS) return {};
  bytes.resize(size);
  return bytes;
}

}  // namespace vk
