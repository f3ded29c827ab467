// vk::PipelineCache: a VkPipelineCache kept on disk per device and driver, so that the pipelines compiled by one run
// (a GPU driver may spend seconds per kernel) are reused by the next trainer and the next run. The file lives in
// $XDG_CACHE_HOME/trainscope (else ~/.cache/trainscope), named after the device's vendor and device IDs, the driver
// version and the pipelineCacheUUID, so another GPU or driver never reads it. It is read with a size cap and its
// header checked against the device before the driver sees it: a corrupt, truncated or foreign file is ignored (the
// pipelines are compiled afresh) and replaced at the next save. Saving writes atomically (a temporary file renamed over
// the old one), so a crash never leaves half a cache.
#pragma once
#include <vulkan/vulkan.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "vk/context.hpp"
#include "vk/handle.hpp"

namespace vk {

// $XDG_CACHE_HOME/trainscope when XDG_CACHE_HOME is an absolute path, else $HOME/.cache/trainscope; empty when
// neither variable is set (then nothing is cached on disk).
std::filesystem::path default_cache_dir();

// The largest pipeline cache file read (a real one is a few MiB at most).
inline constexpr size_t kMaxPipelineCacheBytes = size_t{64} << 20;

// The file name of `device`'s cache: "pipelines-<vendor>-<device>-<driver version>-<pipelineCacheUUID>.bin" (hex).
std::string pipeline_cache_file_name(const VkPhysicalDeviceProperties& device);

// Whether `data` starts with a VkPipelineCacheHeaderVersionOne that matches `device` (header size, version 1,
// vendor and device IDs, pipelineCacheUUID). A pure function.
bool pipeline_cache_header_matches(const std::vector<unsigned char>& data, const VkPhysicalDeviceProperties& device);

class PipelineCache {
 public:
  // A cache for ctx's device, seeded from `dir`/pipeline_cache_file_name() when that file exists and matches; `dir`
  // empty: in memory only. Never fails for a bad file (note() says why it was ignored); throws core::Error(Vulkan)
  // only when the driver cannot create even an empty cache.
  PipelineCache(Context& ctx, std::filesystem::path dir);

  VkPipelineCache handle() const { return cache_.get(); }
  const std::filesystem::path& path() const { return path_; }  // empty: in memory only
  // "" or why the file on disk was not used ("pipelines-....bin: not a pipeline cache of this device; ignored").
  const std::string& note() const { return note_; }
  // Bytes read from disk into the cache (0: started empty).
  size_t loaded_bytes() const { return loaded_bytes_; }

  // Writes the cache to its file when its data changed since it was loaded or last saved (pipelines were compiled).
  // Returns "" or why it could not be written (the cache keeps working in memory). Never throws.
  std::string save() noexcept;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  std::filesystem::path path_;
  Handle<VkPipelineCache> cache_;
  std::vector<unsigned char> saved_;  // the data last read or written
  size_t loaded_bytes_ = 0;
  std::string note_;
};

}  // namespace vk
