// vk::Error: a failed Vulkan set-up step or call, with what the caller needs to react to it: the kind of failure
// (no device at all, a missing layer, out of memory, ...), the VkResult of the call and, for allocations, the bytes
// asked for. The message says what failed in Vulkan's terms and knows no command line; the callers that do
// (run::explain for the trainers and the dashboard) add what the user can do about it (a smaller --batch, ...).
#pragma once
#include <vulkan/vulkan.h>

#include <string>

#include "core/error.hpp"

namespace vk {

enum class Failure {
  NoDevice,          // no Vulkan driver (ICD) or no physical device at all: nothing Vulkan can run here
  MissingLayer,      // VK_LAYER_KHRONOS_validation was asked for and is not installed
  MissingExtension,  // an instance or device extension is not available
  DeviceIndex,       // a device index out of range (ErrorKind::InvalidArgument)
  Unsupported,       // the device lacks a queue or feature that is needed
  Limit,             // a buffer, binding, dispatch, workgroup or shared-memory tile past a device limit (DeviceLimits)
  OutOfMemory,       // device or host memory exhausted; bytes() is the size asked for (0: unknown)
  DeviceLost,        // the device was lost (driver reset, hang)
  Timeout,           // the device did not finish work within the time given it (a hung GPU or driver)
  CallFailed,        // any other failed call; result() says how
};

class Error : public core::Error {
 public:
  Error(Failure failure, const std::string& message, VkResult result = VK_SUCCESS, VkDeviceSize bytes = 0);
  Failure failure() const { return failure_; }
  VkResult result() const { return result_; }  // VK_SUCCESS when no call failed (a missing layer, ...)
  VkDeviceSize bytes() const { return bytes_; }
  bool no_device() const { return failure_ == Failure::NoDevice; }
  // A caller's advice for the user, added once: "<message> (<hint>)". hint() is empty until then.
  Error with_hint(const std::string& hint) const;
  const std::string& hint() const { return hint_; }

 private:
  Failure failure_;
  std::string hint_;
  VkResult result_;
  VkDeviceSize bytes_;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ...
const char* result_name(VkResult result);

// Throws vk::Error "Vulkan: <what> failed: VK_ERROR_..." when result is not VK_SUCCESS, with Failure OutOfMemory,
// DeviceLost or CallFailed after the result. What the user can do about it is the caller's to say (with_hint).
void check(VkResult result, const char* what);

}  // namespace vk
