// The on-disk pipeline cache: file name per device and driver, header check, capped read, atomic write.
#include "vk/pipeline_cache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

#include <unistd.h>

#include "core/error.hpp"

namespace vk {
namespace fs = std::filesystem;

namespace {

// VkPipelineCacheHeaderVersionOne (Vulkan spec, "Pipeline Cache"): headerSize, headerVersion, vendorID, deviceID
// as little-endian uint32, then the 16-byte pipelineCacheUUID; 32 bytes in all.
constexpr size_t kHeaderBytes = 16 + VK_UUID_SIZE;

uint32_t read_u32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The whole file if it is a regular file of at most `cap` bytes; else empty with *why set.
std::vector<unsigned char> read_capped(const fs::path& path, size_t cap, std::string* why) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return {};
  if (!fs::is_regular_file(status)) {
    *why = "not a regular file";
    return {};
  }
  const auto size = fs::file_size(path, ec);
  if (ec || size > cap) {
    *why = ec ? ec.message() : fmt::format("larger than {} MiB", cap >> 20);
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<unsigned char> data(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()))) {
    *why = "cannot be read";
    return {};
  }
  return data;
}

// Writes `data` to a temporary file beside `path`, then renames it over `path`. "" or the reason it failed.
std::string write_atomically(const fs::path& path, const std::vector<unsigned char>& data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message());
  const fs::path tmp = path.string() + fmt::format(".tmp{}", static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return fmt::format("cannot write {}", tmp.string());
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return fmt::format("cannot replace {}: {}", path.string(), why);
  }
  return "";
}

}  // namespace

fs::path default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "trainscope";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "trainscope";
  return {};
}

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

PipelineCache::PipelineCache(Context& ctx, fs::path dir) : device_(ctx.device()) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physical_device(), &props);
  std::vector<unsigned char> data;
  if (!dir.empty()) {
    path_ = dir / pipeline_cache_file_name(props);
    std::string why;
    data = read_capped(path_, kMaxPipelineCacheBytes, &why);
    if (!data.empty() && !pipeline_cache_header_matches(data, props)) why = "not a pipeline cache of this device";
    if (!why.empty()) {
      note_ = fmt::format("{}: {}; ignored (the pipelines are compiled afresh)", path_.string(), why);
      data.clear();
    }
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  VkPipelineCache cache = VK_NULL_HANDLE;
  VkResult r = vkCreatePipelineCache(device_, &ci, nullptr, &cache);
  if (r != VK_SUCCESS && !data.empty()) {  // a driver that still rejects the data: start empty
    note_ = fmt::format("{}: the driver rejected it; ignored", path_.string());
    data.clear();
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    r = vkCreatePipelineCache(device_, &ci, nullptr, &cache);
  }
  check(r, "vkCreatePipelineCache");
  VkDevice dev = device_;
  cache_ = Handle<VkPipelineCache>(cache, [dev](VkPipelineCache c) { vkDestroyPipelineCache(dev, c, nullptr); });
  loaded_bytes_ = data.size();
  saved_ = std::move(data);
}

std::string PipelineCache::save() noexcept {
  try {
    if (path_.empty()) return "";
    size_t size = 0;
    if (vkGetPipelineCacheData(device_, cache_.get(), &size, nullptr) != VK_SUCCESS) return "";
    std::vector<unsigned char> data(size);
    if (vkGetPipelineCacheData(device_, cache_.get(), &size, data.data()) != VK_SUCCESS) return "";
    data.resize(size);
    if (data == saved_) return "";
    const std::string error = write_atomically(path_, data);
    if (error.empty()) saved_ = std::move(data);
    return error;
  } catch (const std::exception& e) {
    return std::string("pipeline cache not saved: ") + e.what();
  }
}

}  // namespace vk
