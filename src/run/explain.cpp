// The command-line hints of Vulkan failures (see explain.hpp).
#include "run/explain.hpp"

#include "vk/error.hpp"

namespace run {

std::string explain(const std::exception& e, Doing doing) {
  const auto* v = dynamic_cast<const vk::Error*>(&e);
  if (!v || !v->hint().empty()) return e.what();
  std::string hint;
  switch (v->failure()) {
    case vk::Failure::OutOfMemory:
      hint = doing == Doing::Rendering ? "try a smaller --size" : "try a smaller --batch or smaller --hidden sizes";
      break;
    case vk::Failure::DeviceLost:
    case vk::Failure::Timeout: hint = "Reset starts it again on a new Vulkan device; the CPU backend keeps running"; break;
    case vk::Failure::MissingLayer: hint = "or run without --validation"; break;
    case vk::Failure::DeviceIndex:
    case vk::Failure::Unsupported: hint = "choose another with --device, see trainscope devices"; break;
    case vk::Failure::Limit: hint = "a smaller --batch or smaller --hidden sizes need less"; break;
    case vk::Failure::NoDevice:  // the message says what to install
    case vk::Failure::MissingExtension:
    case vk::Failure::CallFailed: break;
  }
  return v->with_hint(hint).what();
}

}  // namespace run
