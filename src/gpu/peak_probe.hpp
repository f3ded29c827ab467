// A Vulkan device's measured peaks for `trainscope peaks` and the GPU roofline: memory bandwidth (a copy shader and
// vkCmdCopyBuffer), fp32 FMA throughput (scalar and vec4) and fp16 FMA (where shaderFloat16 is present), dispatch
// round-trip latency and the cost of back-to-back dispatches. Device times come from timestamp queries, like the
// kernels' own; each rate is the best of its repeats, each time their median (core::peak_of_repeats).
#pragma once
#include <string>

#include "core/peaks.hpp"
#include "vk/devices.hpp"

namespace gpu {

// Every GPU figure of device `device_index` (-1: the best, as train picks), each from `repeats` (at least 5):
//   copy_shader, copy_transfer      GB/s: (read + write bytes) / time, buffers of 256 MiB each
//   fma_fp32_scalar, fma_fp32_vec4  GFLOP/s
//   fma_fp16                        GFLOP/s, or not measured (note says why) without shaderFloat16
//   dispatch_round_trip             us: vkQueueSubmit of one empty dispatch until its fence is signalled, host clock
//   dispatch_back_to_back           us per dispatch: empty dispatches with a barrier between each, as the trainers
//                                   record a step, timed with timestamp queries
// device: vk::display_name (a software device says so, and `software` is set). Uses its own Vulkan device; nothing
// else should run on the device meanwhile. Throws core::Error(Vulkan) when there is no device or it fails.
core::DevicePeaks measure_gpu_peaks(int device_index, int repeats = 5, const core::PeakProgress& progress = {});

// The cache key of a device: core::gpu_peaks_key(deviceUUID, driverVersion).
std::string gpu_peaks_key(const vk::DeviceInfo& device);

// The bytes of each of the two buffers the copy probes use.
inline constexpr unsigned long long kPeakCopyBytes = 256ull << 20;

}  // namespace gpu
