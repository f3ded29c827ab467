// `trainscope devices`: the Vulkan devices of this machine, what each offers for compute, and which one
// `trainscope train` picks by default.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/print.hpp"
#include "gpu/gemm_config.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

std::string gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string mib(uint64_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  return m >= 1024 ? fmt::format("{:.1f} GiB", m / 1024) : fmt::format("{:.0f} MiB", m);
}

}  // namespace

CLI::App* add_devices_command(CLI::App& parent) {
  return parent.add_subcommand("devices", "List the Vulkan devices (the index is what `train --device N` takes)");
}

int run_devices() {
  const std::vector<vk::DeviceInfo> devices = vk::list_devices();  // throws core::Error(Vulkan) without Vulkan
  const int best = vk::pick_best_device(devices);
  say("{} Vulkan device{} (* = picked by default; choose another with train --device N)\n\n", devices.size(),
      devices.size() == 1 ? "" : "s");
  for (const auto& d : devices) {
    say("{} {}  {}  ({}{}{})\n", d.index == best ? '*' : ' ', d.index, d.name, d.type,
        d.software ? "; software: runs on the CPU" : "", d.profile.empty() ? "" : "; device profile " + d.profile);
    say("      driver: {}, Vulkan {}\n", d.driver, d.api_version);
    std::string heaps;
    for (const auto& h : d.heaps)
      heaps +=
          fmt::format("{}{} ({})", heaps.empty() ? "" : ", ", gib(h.bytes), h.device_local ? "device-local" : "host");
    say("      memory heaps: {}\n", heaps.empty() ? "none reported" : heaps);
    say("      subgroup size {}, fp16 arithmetic {}, 16-bit storage {}\n", d.subgroup_size, yes_no(d.shader_float16),
        yes_no(d.storage_16bit));
    say("      timestamps {}, max shared memory {} KiB, max workgroup {} invocations\n",
        d.timestamps ? fmt::format("{:g} ns per tick", d.timestamp_period_ns) : "not supported",
        d.max_shared_memory / 1024, d.max_workgroup_invocations);
    say("      compute units {}; split-K counts on {} workgroups running at once\n",
        d.compute_units > 0 ? fmt::format("{} ({})", d.compute_units, d.compute_units_from) : "not reported",
        gpu::busy_workgroups(d));
    const vk::DeviceLimits& l = d.limits;
    say("      limits: storage binding {}, buffer {}, allocation {}, texel view {} texels, {} workgroups per "
        "dimension, timestamps {} bits{}\n",
        mib(l.max_storage_buffer_range), mib(l.max_buffer_size), mib(l.max_memory_allocation_size),
        l.max_texel_buffer_elements, l.max_workgroup_count[0], l.timestamp_valid_bits,
        l.timestamps_near_wrap ? " (started near the wrap)" : "");
    if (!d.profile.empty())
      say("      device profile {} (TRAINSCOPE_DEVICE_PROFILE): the figures above are clamped to it; code "
          "paths of a {}\n",
          d.profile, d.software_paths ? "software device" : "GPU");
    say("\n");
  }
  return 0;
}

}  // namespace app
