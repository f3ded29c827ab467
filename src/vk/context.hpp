// vk::Context: the trainers' Vulkan device (vk::Device) with one compute queue (preferably of a family that also does
// graphics) and the 16-bit storage features the device has, which mixed precision uses.
#pragma once
#include "vk/device.hpp"

namespace vk {

struct ContextOptions {
  int device_index = -1;    // -1: pick_best_device
  bool validation = false;  // enable VK_LAYER_KHRONOS_validation; error if it is not installed
};

class Context : public Device {
 public:
  // Throws vk::Error: no driver or device, an index out of range, no compute queue, the validation layer missing.
  // profile: the device profile to apply (vk/limits.hpp); nullopt: TRAINSCOPE_DEVICE_PROFILE's, if set (tests give
  // their own).
  explicit Context(const ContextOptions& options, std::optional<DeviceProfile> profile = std::nullopt);
};

}  // namespace vk
