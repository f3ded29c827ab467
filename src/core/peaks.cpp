// Device peaks: choosing ceilings, JSON, and the per-device cache file (peaks.hpp).
#include "core/peaks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "platform/files.hpp"
#include "platform/folders.hpp"

namespace core {
namespace {

constexpr const char* kFormat = "trainscope-peaks";
// Bumped when a probe's method changes, so that figures measured the old way are measured again.
constexpr int kVersion = 2;  // 2: a rate's value is its best repeat (was the median)

// The field `name` of `j` with type checked; throws Error(Data) naming it.
template <typename T>
T field(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) throw Error(ErrorKind::Data, fmt::format("missing \"{}\"", name));
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(ErrorKind::Data, fmt::format("\"{}\" has the wrong type", name));
  }
}

void check_figure_value(double v, const std::string& id) {
  if (!std::isfinite(v) || v < 0)
    throw Error(ErrorKind::Data, fmt::format("figure \"{}\": value {} is not a finite number >= 0", id, v));
}

// An advisory lock on `path`.lock for the lifetime of the object, waited for at most wait.seconds (polled every
// 50 ms, so that wait.cancelled, a signal, ends the wait at once). Another trainscope holds it for the milliseconds
// of a save; one held longer is a stuck or foreign process, so the wait gives up with a message naming the lock file
// and its holder (Error(Io)). A lock file that cannot be opened (a read-only folder, a planted symlink: O_NOFOLLOW)
// is not waited for: the save itself then succeeds or says why not.
class FileLock {
 public:
  FileLock(const std::filesystem::path& path, const LockWait& wait) {
    const std::string name = path.string() + ".lock";
    if (platform::File::open_lock_file(name, file_) != 0) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait.seconds);
    for (;;) {
      const platform::LockResult result = file_.try_lock();
      if (result != platform::LockResult::Held) break;  // locked, or unsupported: best effort, as without a lock file
      const bool cancelled = wait.cancelled && wait.cancelled();
      if (cancelled || std::chrono::steady_clock::now() >= deadline) {
        const std::string holder = file_.lock_holder();
        file_.close();
        throw Error(ErrorKind::Io,
                    cancelled ? fmt::format("stopped waiting for the lock {} of the peaks cache", name)
                              : fmt::format("the lock {} of the peaks cache has been held by {} for {:g} s; the peaks "
                                            "were not cached: run trainscope peaks again when it has finished, or "
                                            "end that process",
                                            name, holder.empty() ? "another process" : holder, wait.seconds));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  platform::File file_;  // closing it releases the lock
};

}  // namespace

bool measured_under_load(const DevicePeaks& peaks, double load_now, int hardware_threads) {
  if (hardware_threads <= 0 || peaks.load_average < 0 || load_now < 0) return false;
  const double threads = static_cast<double>(hardware_threads);
  return peaks.load_average > 0.5 * threads && load_now <= 0.25 * threads;
}

std::string figure_text(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

const PeakFigure* DevicePeaks::find(std::string_view id) const {
  for (const auto& f : figures)
    if (f.id == id) return &f;
  return nullptr;
}

double DevicePeaks::value(std::string_view id) const {
  const PeakFigure* f = find(id);
  return f ? f->value : 0;
}

RoofCeilings roof_ceilings(const DevicePeaks& peaks, int threads) {
  RoofCeilings c;
  // The better of two figures, with the label of the one chosen.
  auto best = [&](std::initializer_list<std::string> ids, double& value, std::string& from) {
    for (const auto& id : ids) {
      const PeakFigure* f = peaks.find(id);
      if (f && f->value > value) {
        value = f->value;
        from = f->label;
      }
    }
  };
  if (peaks.backend == "gpu") {
    // A software device's kernels reach what its copy shader reaches: its vkCmdCopyBuffer is a memcpy the kernels
    // cannot match (lavapipe: 71 GB/s against 5 GB/s), and would put every kernel at a few percent of its roof.
    if (peaks.software)
      best({"copy_shader"}, c.bandwidth_gbps, c.bandwidth_from);
    else
      best({"copy_shader", "copy_transfer"}, c.bandwidth_gbps, c.bandwidth_from);
    best({"fma_fp32_scalar", "fma_fp32_vec4"}, c.compute_gflops, c.compute_from);
  } else {
    const std::string t = threads == 1 ? "_1t" : "_nt";
    best({"stream_copy" + t, "stream_triad" + t}, c.bandwidth_gbps, c.bandwidth_from);
    if (!peaks.cpu_kernel_simd.empty()) best({"fma_" + peaks.cpu_kernel_simd + t}, c.compute_gflops, c.compute_from);
  }
  return c;
}

std::string gpu_peaks_key(const std::array<unsigned char, 16>& uuid, unsigned driver_version) {
  std::string hex;
  for (unsigned char b : uuid) hex += fmt::format("{:02x}", b);
  return fmt::format("vulkan:{}:{}", hex, driver_version);
}

std::string cpu_peaks_key(const std::string& cpu_model, int threads) {
  return fmt::format("cpu:{}:{} threads", cpu_model, threads);
}

nlohmann::json peaks_to_json(const DevicePeaks& p) {
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& f : p.figures)
    figures.push_back({{"id", f.id}, {"label", f.label}, {"unit", f.unit}, {"value", f.value},
                       {"samples", f.samples}, {"method", f.method}, {"note", f.note}});
  return {{"backend", p.backend}, {"key", p.key}, {"device", p.device}, {"software", p.software},
          {"threads", p.threads}, {"cpu_kernel_simd", p.cpu_kernel_simd}, {"measured_at", p.measured_at},
          {"seconds", p.seconds}, {"load_average", p.load_average}, {"figures", figures}};
}

DevicePeaks peaks_from_json(const nlohmann::json& j) {
  DevicePeaks p;
  p.backend = field<std::string>(j, "backend");
  if (p.backend != "gpu" && p.backend != "cpu")
    throw Error(ErrorKind::Data, fmt::format("\"backend\" is \"{}\", not gpu or cpu", p.backend));
  p.key = field<std::string>(j, "key");
  if (p.key.empty()) throw Error(ErrorKind::Data, "\"key\" is empty");
  p.device = field<std::string>(j, "device");
  p.software = field<bool>(j, "software");
  p.threads = field<int>(j, "threads");
  p.cpu_kernel_simd = field<std::string>(j, "cpu_kernel_simd");
  p.measured_at = field<std::string>(j, "measured_at");
  p.seconds = field<double>(j, "seconds");
  p.load_average = field<double>(j, "load_average");
  const auto& figures = j.at("figures");
  if (!figures.is_array()) throw Error(ErrorKind::Data, "\"figures\" is not an array");
  for (const auto& fj : figures) {
    PeakFigure f;
    f.id = field<std::string>(fj, "id");
    f.label = field<std::string>(fj, "label");
    f.unit = field<std::string>(fj, "unit");
    f.value = field<double>(fj, "value");
    check_figure_value(f.value, f.id);
    f.samples = field<std::vector<double>>(fj, "samples");
    for (double s : f.samples) check_figure_value(s, f.id);
    f.method = field<std::string>(fj, "method");
    f.note = field<std::string>(fj, "note");
    p.figures.push_back(std::move(f));
  }
  return p;
}

std::filesystem::path default_peaks_path() {
  const std::filesystem::path dir = platform::user_cache_dir();
  return dir.empty() ? dir : dir / "trainscope" / "peaks.json";
}

std::vector<DevicePeaks> load_peaks_cache(const std::filesystem::path& path, std::string* warning) {
  std::vector<DevicePeaks> out;
  const std::string prefix = fmt::format("peaks cache {}: ", path.string());
  auto warn = [&](const std::string& why) {
    if (warning) *warning = fmt::format("{}{}; the peaks will be measured again", prefix, why);
  };
  if (path.empty() || file_kind(path.string()).empty()) return out;  // no cache yet
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_regular_file(path.string(), kMaxPeaksCacheBytes, "peaks cache", OutputKind::Cache));
  } catch (const Error& e) {
    warn(std::string(e.what()).substr(std::string(e.what()).rfind(prefix, 0) == 0 ? prefix.size() : 0));
    return out;
  } catch (const nlohmann::json::exception&) {
    warn("not valid JSON");
    return out;
  }
  if (!j.is_object() || j.value("format", "") != kFormat || !j.contains("devices") || !j["devices"].is_array()) {
    warn("not a trainscope peaks file");
    return out;
  }
  if (j.value("version", 0) != kVersion) {
    warn(fmt::format("written by another version of the probes ({}, now {})", j.value("version", 0), kVersion));
    return out;
  }
  int bad = 0;
  for (const auto& entry : j["devices"]) {
    try {
      out.push_back(peaks_from_json(entry));
    } catch (const Error&) {
      ++bad;
    } catch (const nlohmann::json::exception&) {
      ++bad;
    }
  }
  if (bad > 0) warn(fmt::format("{} entr{} could not be read", bad, bad == 1 ? "y" : "ies"));
  return out;
}

std::optional<DevicePeaks> find_cached_peaks(const std::filesystem::path& path, const std::string& key,
                                             std::string* warning) {
  for (auto& p : load_peaks_cache(path, warning))
    if (p.key == key) return std::move(p);
  return std::nullopt;
}

void save_peaks(const std::filesystem::path& path, const DevicePeaks& peaks, const LockWait& wait) {
  if (path.empty())
    throw Error(ErrorKind::Io, fmt::format("cannot cache the peaks: {}", platform::why_no_cache_dir()));
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw Error(ErrorKind::Io, fmt::format("cannot cache the peaks: cannot create {}: {}",
                                           path.parent_path().string(), ec.message()));
  FileLock lock(path, wait);
  std::vector<DevicePeaks> entries = load_peaks_cache(path);
  std::erase_if(entries, [&](const DevicePeaks& e) { return e.key == peaks.key; });
  entries.push_back(peaks);
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& e : entries) devices.push_back(peaks_to_json(e));
  const nlohmann::json j = {{"format", kFormat}, {"version", kVersion}, {"devices", devices}};
  write_file_atomically(path.string(), j.dump(2) + "\n", "the peaks cache", OutputKind::Cache);
}

}  // namespace core
