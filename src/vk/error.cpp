// vk::Error and the checks of VkResults.
#include "vk/error.hpp"

#include <fmt/format.h>

namespace vk {

Error::Error(Failure failure, const std::string& message, VkResult result, VkDeviceSize bytes)
    : core::Error(failure == Failure::DeviceIndex ? core::ErrorKind::InvalidArgument : core::ErrorKind::Vulkan,
                  message),
      failure_(failure),
      result_(result),
      bytes_(bytes) {}

Error Error::with_hint(const std::string& hint) const {
  if (hint.empty() || !hint_.empty()) return *this;
  Error e(failure_, fmt::format("{} ({})", what(), hint), result_, bytes_);
  e.hint_ = hint;
  return e;
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    default: return "VkResult";
  }
}

void check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  Failure failure = Failure::CallFailed;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) failure = Failure::OutOfMemory;
  if (result == VK_ERROR_DEVICE_LOST) failure = Failure::DeviceLost;
  throw Error(failure, fmt::format("Vulkan: {} failed: {}", what, result_name(result)), result);
}

}  // namespace vk
