// vk::PipelineCache: a VkPipelineCache seeded from bytes that an earlier run saved, so that the pipelines compiled by
// one run (a GPU driver may spend seconds per kernel) are reused by the next trainer and the next run. The bytes are
// checked against the device before the driver sees them: a corrupt, truncated or foreign cache is ignored (the
// pipelines are compiled afresh). Where the bytes are kept is the caller's business (gpu::DeviceCache keeps them in
// $XDG_CACHE_HOME/trainscope, in a file named by pipeline_cache_file_name()).
#pragma once
#include <vulkan/vulkan.h>

#include <cstddef>
#include <string>
#include <vector>

#include "vk/context.hpp"
#include "vk/handle.hpp"

namespace vk {

// The largest pipeline cache accepted (a real one is a few MiB at most).
inline constexpr size_t kMaxPipelineCacheBytes = size_t{64} << 20;

// A file name for `device`'s cache: "pipelines-<vendor>-<device>-<driver version>-<pipelineCacheUUID>.bin" (hex), so
// that another GPU or another driver build never reads it.
std::string pipeline_cache_file_name(const VkPhysicalDeviceProperties& device);

// Whether `data` starts with a VkPipelineCacheHeaderVersionOne that matches `device` (header size, version 1,
// vendor and device IDs, pipelineCacheUUID). A pure function.
bool pipeline_cache_header_matches(const std::vector<unsigned char>& data, const VkPhysicalDeviceProperties& device);

class PipelineCache {
 public:
  // A cache for ctx's device, seeded with `initial` when it matches the device (empty: start empty). Never fails for
  // bad bytes (note() says why they were ignored); throws core::Error(Vulkan) only when the driver cannot create
  // even an empty cache.
  PipelineCache(Context& ctx, const std::vector<unsigned char>& initial);

  VkPipelineCache handle() const { return cache_.get(); }
  // "" or why the initial bytes were not used ("not a pipeline cache of this device").
  const std::string& note() const { return note_; }
  // Bytes of `initial` taken into the cache (0: it started empty).
  size_t loaded_bytes() const { return loaded_bytes_; }
  // The cache's bytes now (vkGetPipelineCacheData), to be kept for the next run; empty when the driver gives none.
  std::vector<unsigned char> data() const;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  Handle<VkPipelineCache> cache_;
  size_t loaded_bytes_ = 0;
  std::string note_;
};

}  // namespace vk
