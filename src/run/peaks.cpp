// Cached or measured device peaks (peaks.hpp).
#include "run/peaks.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "cpu/peak_probe.hpp"
#include "gpu/peak_probe.hpp"
#include "vk/devices.hpp"
#include "platform/folders.hpp"

namespace run {

std::string peaks_key(const std::string& backend, int device) {
  if (backend == "cpu") return cpu::cpu_peaks_key();
  if (backend != "gpu") throw core::Error(core::ErrorKind::InvalidArgument, "no peaks for backend " + backend);
  const std::vector<vk::DeviceInfo> devices = vk::list_devices();
  const int index = device < 0 ? vk::pick_best_device(devices) : device;
  if (index >= static_cast<int>(devices.size()))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--device {}: there are {} Vulkan devices (see trainscope devices)", device,
                                  devices.size()));
  return gpu::gpu_peaks_key(devices[static_cast<size_t>(index)]);
}

PeaksLookup lookup_peaks(const std::string& backend, int device, PeaksPolicy policy, const std::filesystem::path& cache,
                         const core::PeakProgress& progress, int repeats, size_t stream_bytes,
                         const Cancelled& cancelled) {
  PeaksLookup out;
  if (policy != PeaksPolicy::Remeasure) {
    if (auto cached = core::find_cached_peaks(cache, peaks_key(backend, device), &out.warning)) {
      out.peaks = std::move(*cached);
      out.cached = true;
      if (backend == "cpu") cpu::use_active_level(out.peaks);  // measured, perhaps, under another kernel level
      return out;
    }
    if (policy == PeaksPolicy::CachedOnly) return out;
  }
  // The probes report each figure before measuring it: a cancel is seen there, so at most one figure is awaited.
  const core::PeakProgress checked = [&](const std::string& what) {
    if (cancelled && cancelled())
      throw core::Error(core::ErrorKind::Interrupted, fmt::format("measuring stopped by the user (at {})", what));
    if (progress) progress(what);
  };
  out.peaks = backend == "gpu" ? gpu::measure_gpu_peaks(device, repeats, checked)
                               : cpu::measure_cpu_peaks(repeats, checked, stream_bytes);
  if (!cache.empty()) {
    try {
      core::LockWait wait;
      wait.cancelled = cancelled;
      core::save_peaks(cache, out.peaks, wait);
      out.saved = true;
    } catch (const core::Error& e) {
      out.warning = e.what();
    }
  } else {
    out.warning = fmt::format("not cached: {}", platform::why_no_cache_dir());
  }
  return out;
}

namespace {

std::vector<core::BackendPeaks> backend_peaks(const std::vector<std::string>& backends, int device,
                                              const std::filesystem::path& cache, PeaksPolicy policy,
                                              const core::PeakProgress& progress, const Cancelled& cancelled) {
  std::vector<core::BackendPeaks> out;
  for (const auto& name : backends) {
    core::BackendPeaks b;
    b.backend = name;
    b.source = "not measured";
    try {
      PeaksLookup found = lookup_peaks(name, device, policy, cache, progress, 5, 0, cancelled);
      if (found.cached || policy != PeaksPolicy::CachedOnly) {
        b.peaks = std::move(found.peaks);
        b.source = found.cached ? "cached" : "measured";
        b.saved = found.saved;
      } else {
        b.note = "not in the peaks cache";
      }
      if (!found.warning.empty()) b.note = found.warning;
    } catch (const core::Error& e) {  // e.g. no Vulkan device: the GPU backend says so itself when it starts
      b.note = e.what();
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

std::vector<core::BackendPeaks> cached_peaks(const std::vector<std::string>& backends, int device,
                                             const std::filesystem::path& cache) {
  return backend_peaks(backends, device, cache, PeaksPolicy::CachedOnly, {}, {});
}

std::vector<core::BackendPeaks> peaks_measured_if_missing(const std::vector<std::string>& backends, int device,
                                                          const std::filesystem::path& cache,
                                                          const core::PeakProgress& progress,
                                                          const Cancelled& cancelled) {
  return backend_peaks(backends, device, cache, PeaksPolicy::MeasureIfMissing, progress, cancelled);
}

}  // namespace run
