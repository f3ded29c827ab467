// vk::Context: the compute configuration of vk::Device.
#include "vk/context.hpp"

namespace vk {

namespace {
DeviceOptions compute_device(const ContextOptions& o, std::optional<DeviceProfile> profile) {
  DeviceOptions d;
  d.device_index = o.device_index;
  d.validation = o.validation;
  d.queue = VK_QUEUE_COMPUTE_BIT;
  d.queue_preferred = VK_QUEUE_GRAPHICS_BIT;  // a family that also does graphics (the dashboard may share the device)
  d.sixteen_bit = true;
  d.profile = std::move(profile);
  return d;
}
}  // namespace

Context::Context(const ContextOptions& options, std::optional<DeviceProfile> profile)
    : Device(compute_device(options, std::move(profile))) {}

}  // namespace vk
