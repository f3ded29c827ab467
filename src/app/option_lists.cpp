// Option values shared by several commands: the --backend list and the --device index, refused the same way (one
// line, exit code 2) by bench and peaks as by train.
#include <fmt/format.h>

#include <algorithm>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "vk/devices.hpp"

namespace app {

std::vector<std::string> parse_backends(const std::string& text, std::string_view allowed) {
  auto bad = [&](const std::string& why) {
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--backend {}: {} (allowed: {})", text, why, allowed));
  };
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    if (name.empty()) bad("an empty backend name");
    if (name != "gpu" && name != "cpu") bad(fmt::format("unknown backend '{}'", name));
    if (std::find(names.begin(), names.end(), name) != names.end()) bad(fmt::format("{} is named twice", name));
    names.push_back(name);
    start = comma + 1;
  }
  return names;
}

void check_device_index(int device) {
  std::vector<vk::DeviceInfo> devices;
  try {
    devices = vk::list_devices();
  } catch (const core::Error&) {
    return;  // no Vulkan at all: the GPU side says so itself when it starts
  }
  const int count = static_cast<int>(devices.size());
  if (device >= count)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--device {}: no such Vulkan device; this machine has {} (0..{}), see trainscope "
                                  "devices",
                                  device, count, count - 1));
}

}  // namespace app
