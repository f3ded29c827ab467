// The GPU backend's background compile (background_compile.hpp).
#include "run/background_compile.hpp"

#include <fmt/format.h>

#include "gpu/device_cache.hpp"
#include "gpu/kernels.hpp"
#include "gpu/warm_up.hpp"

namespace run {

BackgroundCompile::BackgroundCompile(std::shared_ptr<gpu::DeviceCache> cache, std::vector<core::Precision> precisions)
    : cache_(std::move(cache)), precisions_(std::move(precisions)) {}

void BackgroundCompile::use_device(const vk::ContextOptions& options) {
  options_ = options;
  device_known_ = true;
}

std::string BackgroundCompile::step() {
  if (!device_known_) return "waiting for the GPU's first trainer";
  const std::shared_ptr<gpu::SharedDevice> device = cache_->device(options_);
  if (device != device_) {
    // A new device (the old one was lost or hung, or the options changed): what was made on the old one goes now,
    // kernels before their device, and every precision is compiled again on the new one.
    pending_.clear();
    kernels_.reset();
    device_ = device;
    next_precision_ = 0;
    total_ = 0;
  }
  gpu::PipelineWarmer& warmer = device->warmer();
  // The pipelines of one precision, one at a time; those a trainer already ran are skipped.
  while (!pending_.empty() && warmer.warmed(*pending_.back())) pending_.pop_back();
  if (pending_.empty()) {
    kernels_.reset();
    while (next_precision_ < precisions_.size()) {
      const core::Precision p = precisions_[next_precision_++];
      if (!gpu::precision_supported(device->context.info(), p)) continue;
      kernels_ = cache_->kernels(device, p);  // the kernel set's pipelines are created here (one piece)
      for (const vk::ComputePipeline* pipeline : gpu::every_pipeline(*kernels_))
        if (!warmer.warmed(*pipeline)) pending_.push_back(pipeline);
      total_ = pending_.size();
      if (!pending_.empty()) return fmt::format("compiling the {} kernels (0/{})", core::to_string(p), total_);
    }
    // Done: nothing here keeps a kernel set or the device (a later call on the same device finds all compiled).
    kernels_.reset();
    device_.reset();
    return "";
  }
  const gpu::PipelineWarmer::Item item{pending_.back()};
  warmer.warm({&item, 1});
  pending_.pop_back();
  return fmt::format("compiling the {} kernels ({}/{})", core::to_string(kernels_->precision()),
                     total_ - pending_.size(), total_);
}

}  // namespace run
