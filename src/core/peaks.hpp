// Measured device peaks (`trainscope peaks`): the figures a roofline is drawn from — memory bandwidth, arithmetic
// throughput, dispatch overheads — for one device (a Vulkan device, or the CPU at a thread count), each with its
// unit, its method and its samples, and the on-disk cache that keeps them per device so that they are measured once
// and never while training runs ($XDG_CACHE_HOME/trainscope/peaks.json). The measuring itself is elsewhere
// (cpu/peak_probe for the CPU, gpu/peak_probe for Vulkan): this layer only holds, chooses and stores figures.
#pragma once
#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the full header only where JSON is built or read (build time)

namespace core {

// One measured figure from its samples (at least 5), in `unit`: a rate's best sample, a time's median
// (core::peak_of_repeats).
struct PeakFigure {
  std::string id;        // stable key: "copy_shader", "fma_fp32_vec4", "stream_triad_nt", "fma_avx512_1t", ...
  std::string label;     // for people: "memory bandwidth: copy shader"
  std::string unit;      // "GB/s" (1e9 bytes/s), "GFLOP/s" (1e9 FLOP/s, an FMA counts 2) or "us" (microseconds)
  double value = 0;      // the best sample of a rate, the median of a time; 0 when not measured (`note` says why)
  std::vector<double> samples;
  std::string method;    // how it was measured, for --help, tooltips and the CSV
  std::string note;      // why it was not measured ("no shaderFloat16 on this device"), else ""

  bool is_rate() const { return unit != "us"; }                   // GB/s, GFLOP/s: higher is better
  const char* statistic() const { return is_rate() ? "best" : "median"; }  // of the samples, for people
};

// The peaks of one device. backend "gpu": a Vulkan device; "cpu": the CPU with `threads` threads.
struct DevicePeaks {
  std::string backend;      // "gpu" | "cpu"
  std::string key;          // the cache key (gpu_peaks_key / cpu_peaks_key)
  std::string device;       // display name ("llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan: runs on the CPU]")
  bool software = false;    // a software Vulkan device: its figures are the CPU's, seen through the driver
  int threads = 0;          // cpu: the thread count of the *_nt figures; gpu: 0
  std::string cpu_kernel_simd;  // cpu: the id part of the SIMD level the kernels run ("avx512", "avx2"), else ""
  std::string measured_at;  // local time, "2026-11-20 14:03:11"
  double seconds = 0;       // how long measuring took
  double load_average = -1; // the 1-minute load average when measuring started (-1: unknown)
  std::vector<PeakFigure> figures;

  const PeakFigure* find(std::string_view id) const;  // null when absent
  double value(std::string_view id) const;            // 0 when absent or not measured
};

// The peaks one backend of a run is drawn against, and where they came from (the dashboard, train's report).
struct BackendPeaks {
  std::string backend;               // "gpu" | "cpu"
  std::optional<DevicePeaks> peaks;  // empty: not measured (yet)
  std::string source;                // "cached" | "measured" | "not measured" (then `note` says why)
  std::string note;                  // why there are none, or a cache that could not be read or written; else ""
  bool saved = false;                // source "measured": they went into the cache (else `note` says why not)
};

// Whether cached `peaks` were measured on a loaded machine (a 1-minute load average above half the hardware
// threads: other programs took cores or memory bandwidth from the probes; a CPU memory ceiling of 5.41 GB/s came from
// such a run) while the machine is quiet now (`load_now` at most a quarter of them): then they are measured again.
// An unknown load (-1, or 0 threads) never asks for it.
bool measured_under_load(const DevicePeaks& peaks, double load_now, int hardware_threads);

// A figure as the table and the dashboard show it: three significant figures at least, no exponent ("2.02", "19.2",
// "444").
std::string figure_text(double value);

// Progress lines while measuring ("gpu: fp32 FMA, vec4").
using PeakProgress = std::function<void(const std::string&)>;

// The ceilings of a roofline, from a DevicePeaks (core/roofline.hpp draws and uses them).
struct RoofCeilings {
  double bandwidth_gbps = 0;   // memory ceiling, GB/s (0: unknown)
  double compute_gflops = 0;   // compute ceiling, GFLOP/s (0: unknown)
  std::string bandwidth_from;  // the figure's label, for tooltips
  std::string compute_from;
};

// The ceilings of `peaks` for a trainer with `threads` threads (cpu; ignored for gpu):
//   gpu: bandwidth = the better of the copy shader and vkCmdCopyBuffer, on a software device the copy shader alone
//        (what its kernels can reach: its vkCmdCopyBuffer is the CPU's memcpy); compute = the better of fp32 scalar /
//        vec4 FMA (the kernels compute in fp32 in every storage precision);
//   cpu: threads == 1: the 1-thread figures, else the all-threads ones; bandwidth = the better of STREAM copy and
//        triad; compute = the FMA peak at the SIMD width the kernels run.
RoofCeilings roof_ceilings(const DevicePeaks& peaks, int threads);

// Cache keys. gpu: "vulkan:<deviceUUID hex>:<driverVersion>"; cpu: "cpu:<model name>:<threads> threads".
std::string gpu_peaks_key(const std::array<unsigned char, 16>& device_uuid, unsigned driver_version);
std::string cpu_peaks_key(const std::string& cpu_model, int threads);

nlohmann::json peaks_to_json(const DevicePeaks& peaks);
// Throws core::Error(Data) naming the field when `j` is not a valid DevicePeaks (missing keys, wrong types,
// negative or non-finite figures).
DevicePeaks peaks_from_json(const nlohmann::json& j);

// The peaks cache file: $XDG_CACHE_HOME/trainscope/peaks.json when XDG_CACHE_HOME is an absolute path, else
// $HOME/.cache/trainscope/peaks.json; empty when neither is set (then nothing is cached).
std::filesystem::path default_peaks_path();

// The largest peaks cache read (a real one is a few KiB).
inline constexpr size_t kMaxPeaksCacheBytes = size_t{1} << 20;

// Every entry of the cache at `path`. A missing file is an empty cache; a file that is not a regular file, is too
// large, is not JSON or has the wrong format is treated as empty too, with *warning saying why (it is replaced at the
// next save). Entries that do not parse are skipped (and said in *warning). Never throws.
std::vector<DevicePeaks> load_peaks_cache(const std::filesystem::path& path, std::string* warning = nullptr);

// The cached entry with `key`, if any (load_peaks_cache's rules).
std::optional<DevicePeaks> find_cached_peaks(const std::filesystem::path& path, const std::string& key,
                                             std::string* warning = nullptr);

// How long save_peaks waits for the cache's lock, and what ends the wait early.
struct LockWait {
  double seconds = 30;              // another trainscope holds the lock for milliseconds: 30 s means it is stuck
  std::function<bool()> cancelled;  // polled every 50 ms while waiting (e.g. a SIGINT arrived); empty: never
};

// Adds `peaks` to the cache at `path`, replacing the entry with the same key, creating the directory if needed.
// Written atomically as a cache (core::write_file_atomically, OutputKind::Cache: never through a symlink, never over
// another user's or an unreadable file) under an advisory lock beside it (`path`.lock), so two processes saving at
// once keep both entries. Throws core::Error(Io) when it cannot be written, or when the lock is still held by
// another process after wait.seconds (the message names the lock file and, from /proc/locks, its holder).
void save_peaks(const std::filesystem::path& path, const DevicePeaks& peaks, const LockWait& wait = {});

}  // namespace core
