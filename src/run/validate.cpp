// The data-dependent checks of a run's settings, the device's limits included (see validate.hpp).
#include "run/validate.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "gpu/device_fit.hpp"
#include "vk/devices.hpp"

namespace run {

void validate_for_backends(const core::TrainConfig& cfg, const core::DataSplit& data) {
  core::validate_against_data(cfg, data);
  if (std::find(cfg.backends.begin(), cfg.backends.end(), "gpu") == cfg.backends.end()) return;
  const std::vector<vk::DeviceInfo>* devices = nullptr;
  try {
    devices = &vk::cached_devices();
  } catch (const core::Error& e) {
    if (e.kind() == core::ErrorKind::InvalidArgument) throw;  // a bad device profile
    return;  // no Vulkan: the GPU backend says so itself when it starts
  }
  const int index = cfg.device >= 0 ? cfg.device : vk::pick_best_device(*devices);
  if (index >= static_cast<int>(devices->size())) return;  // --device out of range: refused with its own message
  const std::string problem = gpu::device_fit_problem(cfg, data, (*devices)[static_cast<size_t>(index)]);
  if (!problem.empty()) throw core::Error(core::ErrorKind::InvalidArgument, problem);
}

}  // namespace run
