// The measured peaks of the devices a run trains on, from the per-device cache (core/peaks.hpp) or measured once and
// cached: `trainscope peaks`, `train` (its report's roofline), the dashboard (rooflines, bandwidth shares and its
// re-measure button) and `bench` (% of peak) all go through here, so a device is measured at most once per cache.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/peaks.hpp"

namespace run {

struct PeaksLookup {
  core::DevicePeaks peaks;  // empty figures when neither cached nor measured
  bool cached = false;      // read from the cache (false: measured now, or missing)
  bool saved = false;       // measured now and written to the cache
  std::string warning;      // a cache that could not be read or written, else ""
};

// Polled between the figures of a measurement and while waiting for the cache's lock: true (a SIGINT arrived) ends
// the measurement with core::Error(Interrupted) and the wait with a warning. Empty: never.
using Cancelled = std::function<bool()>;

enum class PeaksPolicy {
  CachedOnly,        // the cached figures or none: never measures (where something may be running)
  MeasureIfMissing,  // the cached figures, or measured now and cached
  Remeasure,         // measured now and cached, whatever the cache holds
};

// The peaks of backend "gpu" (Vulkan device `device`, -1: the best) or "cpu" (all hardware threads; the 1-thread
// figures are in the same entry). `cache`: the cache file (core::default_peaks_path(); empty: none). Measuring takes
// seconds to tens of seconds and must not overlap training. Throws core::Error (e.g. Vulkan: no device) only when it
// has to measure and cannot, or Error(Interrupted) when `cancelled` said so; a cache problem (unreadable, not
// writable, its lock held elsewhere for core::LockWait's 30 s) is a warning. repeats, stream_bytes: as
// cpu::measure_cpu_peaks.
PeaksLookup lookup_peaks(const std::string& backend, int device, PeaksPolicy policy, const std::filesystem::path& cache,
                         const core::PeakProgress& progress = {}, int repeats = 5, size_t stream_bytes = 0,
                         const Cancelled& cancelled = {});

// The cached peaks of each of `backends` ("gpu" | "cpu"), never measuring: source "cached", or "not measured" with
// the reason in `note` (not in the cache, no Vulkan device to name). Never throws.
std::vector<core::BackendPeaks> cached_peaks(const std::vector<std::string>& backends, int device,
                                             const std::filesystem::path& cache);

// Every backend's peaks, each from the cache or, when missing, measured now and cached (source "measured", `saved`
// when the cache took them); one that cannot be measured, or whose measuring `cancelled` stopped, is "not measured"
// with the reason. Measuring takes seconds: call it with no trainer running.
std::vector<core::BackendPeaks> peaks_measured_if_missing(const std::vector<std::string>& backends, int device,
                                                          const std::filesystem::path& cache,
                                                          const core::PeakProgress& progress = {},
                                                          const Cancelled& cancelled = {});

// The cache key of backend "gpu" (device `device`) or "cpu", without measuring. Throws core::Error(Vulkan) when
// the GPU device cannot be listed.
std::string peaks_key(const std::string& backend, int device);

}  // namespace run
