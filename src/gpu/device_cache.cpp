// The device, kernels and dataset that consecutive GPU trainers share.
#include "gpu/device_cache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "gpu/kernels.hpp"
#include "gpu/warm_up.hpp"
#include "platform/folders.hpp"

namespace gpu {

namespace {

// The pipeline cache file of `ctx`'s device in `dir` ("" when dir is empty), and its bytes (empty when there is none
// or it cannot be used: *note says why).
std::filesystem::path cache_path(vk::Context& ctx, const std::filesystem::path& dir) {
  if (dir.empty()) return {};
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physical_device(), &props);
  return dir / vk::pipeline_cache_file_name(props);
}

std::vector<unsigned char> read_cache(const std::filesystem::path& path, std::string* note) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return {};
  try {
    const std::string bytes =
        core::read_regular_file(path.string(), vk::kMaxPipelineCacheBytes, "pipeline cache", core::OutputKind::Cache);
    return std::vector<unsigned char>(bytes.begin(), bytes.end());
  } catch (const core::Error& e) {
    *note = e.what();
    return {};
  }
}

}  // namespace

std::filesystem::path default_cache_dir() {
  const std::filesystem::path dir = platform::user_cache_dir();
  return dir.empty() ? dir : dir / "trainscope";
}

SharedDevice::SharedDevice(const vk::ContextOptions& o, const std::filesystem::path& pipeline_cache_dir,
                           std::optional<vk::DeviceProfile> profile)
    : options(o),
      context(o, std::move(profile)),
      pipeline_cache_path(cache_path(context, pipeline_cache_dir)),
      pipeline_cache(context, pipeline_cache_saved = read_cache(pipeline_cache_path, &pipeline_cache_note)) {
  if (pipeline_cache_note.empty() && !pipeline_cache.note().empty())
    pipeline_cache_note = "pipeline cache " + pipeline_cache_path.string() + ": " + pipeline_cache.note();
  if (!pipeline_cache_note.empty()) {
    pipeline_cache_note += "; ignored (the pipelines are compiled afresh)";
    pipeline_cache_saved.clear();  // a bad file is replaced at the next save
  }
}

SharedDevice::~SharedDevice() = default;

PipelineWarmer& SharedDevice::warmer() {
  if (!warmer_) warmer_ = std::make_unique<PipelineWarmer>(context);
  return *warmer_;
}

std::string SharedDevice::save_pipeline_cache() noexcept {
  try {
    if (pipeline_cache_path.empty()) return "";
    std::vector<unsigned char> bytes = pipeline_cache.data();
    if (bytes.empty() || bytes == pipeline_cache_saved) return "";
    std::error_code ec;
    std::filesystem::create_directories(pipeline_cache_path.parent_path(), ec);
    core::write_file_atomically(pipeline_cache_path.string(),
                                std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                                "the pipeline cache", core::OutputKind::Cache);
    pipeline_cache_saved = std::move(bytes);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

DeviceDataset::DeviceDataset(vk::Context& ctx, const core::DataSplit& data) : content_id(data.content_id) {
  const core::Dataset& tr = data.train;
  const core::Dataset& te = data.test;
  const double mib = static_cast<double>((tr.x.size() + tr.y.size() + te.x.size() + te.y.size()) * 4) / (1 << 20);
  core::report_progress(fmt::format("uploading {:.0f} MiB of data", mib));
  auto make = [&](VkDeviceSize bytes, const char* name) {
    return vk::Buffer(ctx, std::max<VkDeviceSize>(bytes, 16), vk::MemoryKind::DeviceLocal, name);
  };
  // As many values as the dataset holds: a token dataset's y has a target per position (count x T).
  x_train = make(VkDeviceSize(tr.x.size()) * 4, "x_train");
  y_train = make(VkDeviceSize(tr.y.size()) * 4, "y_train");
  x_test = make(VkDeviceSize(te.x.size()) * 4, "x_test");
  y_test = make(VkDeviceSize(te.y.size()) * 4, "y_test");
  test_order = make(VkDeviceSize(te.count) * 4, "test_order");
  x_train.upload(ctx, tr.x.data(), tr.x.size() * 4);
  y_train.upload(ctx, tr.y.data(), tr.y.size() * 4);
  x_test.upload(ctx, te.x.data(), te.x.size() * 4);
  y_test.upload(ctx, te.y.data(), te.y.size() * 4);
  std::vector<uint32_t> identity(static_cast<size_t>(te.count));
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<uint32_t>(i);
  test_order.upload(ctx, identity.data(), identity.size() * 4);
}

DeviceCache::~DeviceCache() {
  // What lives on the device goes first (members are destroyed in reverse order anyway; said here for the reader).
  dataset_.reset();
  kernels_.clear();
  device_.reset();
}

std::shared_ptr<SharedDevice> DeviceCache::device(const vk::ContextOptions& options) {
  // A device that was lost or hung (vk::Device::Health) is never used again: a Reset after a GPU failure gets a new
  // one. The old one goes when its last user does (a hung device's trainer may keep it until the process ends).
  if (device_ && device_->options.device_index == options.device_index &&
      device_->options.validation == options.validation && device_->context.health() == vk::Device::Health::Ok)
    return device_;
  dataset_.reset();
  kernels_.clear();
  device_.reset();
  core::report_progress("creating the device");
  device_ = std::make_shared<SharedDevice>(options, dir_, profile_);
  ++counts_.devices;
  if (!device_->pipeline_cache_note.empty())
    std::cerr << "trainscope: warning: " << device_->pipeline_cache_note << "\n";
  return device_;
}

std::shared_ptr<const Kernels> DeviceCache::kernels(const std::shared_ptr<SharedDevice>& device,
                                                    core::Precision precision) {
  const VkPipelineCache pipelines = device->pipeline_cache.handle();
  if (device != device_) return std::make_shared<const Kernels>(device->context, std::nullopt, precision, pipelines);
  auto& slot = kernels_[precision];
  if (!slot) {
    ++counts_.kernel_sets;
    core::report_progress(fmt::format("compiling {} kernels", core::to_string(precision)));
    slot = std::make_shared<const Kernels>(device->context, std::nullopt, precision, pipelines);
    if (const std::string error = device->save_pipeline_cache(); !error.empty() && !save_warned_) {
      std::cerr << "trainscope: warning: pipeline cache not saved (the kernels are compiled again next time): "
                << error << "\n";
      save_warned_ = true;
    }
  }
  return slot;
}

std::shared_ptr<const DeviceDataset> DeviceCache::dataset(const std::shared_ptr<SharedDevice>& device,
                                                          const core::DataSplit& data) {
  if (device != device_ || data.content_id == 0) return std::make_shared<const DeviceDataset>(device->context, data);
  if (!dataset_ || dataset_->content_id != data.content_id) {
    ++counts_.datasets;
    dataset_.reset();  // the old copy's device memory is free before the new one is allocated
    dataset_ = std::make_shared<const DeviceDataset>(device->context, data);
  }
  return dataset_;
}

}  // namespace gpu
