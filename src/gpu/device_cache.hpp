// gpu::DeviceCache: what the GPU trainers that one backend makes one after another share, so that a change of batch
// size, optimizer or precision, or a Reset, builds only what depends on it. Measured on lavapipe (2 cores, loaded):
// creating the trainer for a new batch size took ~3 s alone and ~20 s beside the other trainer, nearly all of it
// uploading the 210 MiB dataset again; the Vulkan device and the compiled pipelines cost the rest. Shared here:
//   - the Vulkan device (vk::Context) with its pipeline cache on disk,
//   - the compiled kernels of each precision,
//   - the training and test sets on the device (kept while DataSplit::content_id stays the same).
// One cache per run::Worker: the trainers are made and used on one thread; not thread-safe.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/pipeline_cache.hpp"

namespace gpu {

class Kernels;
class PipelineWarmer;

// $XDG_CACHE_HOME/trainscope when XDG_CACHE_HOME is an absolute path, else $HOME/.cache/trainscope; empty when
// neither variable is set (then nothing is kept on disk).
std::filesystem::path default_cache_dir();

// One Vulkan device for compute, shared by the trainers that use it, with its pipeline cache: read from
// `pipeline_cache_dir`/vk::pipeline_cache_file_name() when that folder is given (a file that cannot be read, is too
// large or belongs to another device or driver is ignored, with a note), written back by save_pipeline_cache().
struct SharedDevice {
  SharedDevice(const vk::ContextOptions& options, const std::filesystem::path& pipeline_cache_dir,
               std::optional<vk::DeviceProfile> profile = std::nullopt);
  ~SharedDevice();
  // Writes the pipeline cache atomically (core::write_file_atomically) when its bytes changed since they were read or
  // last written. Returns "" or why it could not be written (the cache keeps working in memory). Never throws.
  std::string save_pipeline_cache() noexcept;

  vk::ContextOptions options;
  vk::Context context;
  std::filesystem::path pipeline_cache_path;        // empty: in memory only
  std::string pipeline_cache_note;                  // "" or why the file on disk was not used ("pipeline cache P: ...")
  std::vector<unsigned char> pipeline_cache_saved;  // the bytes on disk (read or last written)
  vk::PipelineCache pipeline_cache;                 // after the members above: made from them

  // Runs pipelines once before they are needed (gpu/warm_up.hpp), remembering which it ran; made on first use.
  // Destroyed first (declared last).
  PipelineWarmer& warmer();
  std::unique_ptr<PipelineWarmer> warmer_;
};

// The training and test sets on the device as gather_batch reads them (x as fp32, y as int32), and the identity
// order of the test set (evaluation). Uploaded once per content (DataSplit::content_id).
struct DeviceDataset {
  DeviceDataset(vk::Context& ctx, const core::DataSplit& data);
  uint64_t content_id = 0;
  vk::Buffer x_train, y_train, x_test, y_test;
  vk::Buffer test_order;
};

class DeviceCache {
 public:
  // pipeline_cache_dir: where compiled pipelines are kept between runs (default_cache_dir()); empty: nowhere.
  // profile: the device profile of its devices (vk/limits.hpp); nullopt: TRAINSCOPE_DEVICE_PROFILE's (tests give
  // their own).
  explicit DeviceCache(std::filesystem::path pipeline_cache_dir = {},
                       std::optional<vk::DeviceProfile> profile = std::nullopt)
      : dir_(std::move(pipeline_cache_dir)), profile_(std::move(profile)) {}
  ~DeviceCache();
  DeviceCache(const DeviceCache&) = delete;
  DeviceCache& operator=(const DeviceCache&) = delete;

  // The device for `options`: the cached one when device index and validation match and it was neither lost nor
  // hung, else a new one (then the kernels and the dataset are made again too). Throws core::Error(Vulkan) as
  // vk::Context does.
  std::shared_ptr<SharedDevice> device(const vk::ContextOptions& options);
  // The kernels of `precision` on device(): compiled once (through the pipeline cache, which is then saved; a cache
  // that cannot be saved is said once on stderr). Throws core::Error(Vulkan).
  std::shared_ptr<const Kernels> kernels(const std::shared_ptr<SharedDevice>& device, core::Precision precision);
  // `data` on device(): uploaded once while data.content_id is the same and not 0. Throws core::Error(Vulkan) (out
  // of device memory, say).
  std::shared_ptr<const DeviceDataset> dataset(const std::shared_ptr<SharedDevice>& device,
                                               const core::DataSplit& data);

  // How often each part was made (what a rebuild saved is what these did not count; the tests read them).
  struct Counts {
    int devices = 0;      // Vulkan devices created
    int kernel_sets = 0;  // Kernels compiled (one set per precision and device)
    int datasets = 0;     // dataset uploads
  };
  const Counts& counts() const { return counts_; }

 private:
  std::filesystem::path dir_;
  std::optional<vk::DeviceProfile> profile_;
  bool save_warned_ = false;
  Counts counts_;
  // Declared in the order of construction; destroyed in reverse: whatever lives on the device goes before it.
  std::shared_ptr<SharedDevice> device_;
  std::map<core::Precision, std::shared_ptr<const Kernels>> kernels_;
  std::shared_ptr<const DeviceDataset> dataset_;
};

}  // namespace gpu
