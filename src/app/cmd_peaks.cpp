// `trainscope peaks`: the measured peaks of the GPU (Vulkan) and the CPU — the ceilings of the rooflines — from the
// per-device cache, measured once when missing (or again with --remeasure); a table on stdout, --report as JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/print.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/memory_budget.hpp"
#include "core/report.hpp"
#include "cpu/peak_probe.hpp"
#include "gpu/peak_probe.hpp"
#include "run/peaks.hpp"
#include "run/session.hpp"
#include "platform/folders.hpp"

namespace app {
namespace {

using core::figure_text;

void print_peaks(std::FILE* out, const core::DevicePeaks& p, bool cached) {
  say(out, "{}  {}\n", p.backend == "gpu" ? "GPU" : "CPU", p.device);
  if (p.software)
    say(out, "     software Vulkan device: these are the CPU's figures seen through the driver, not a GPU's\n");
  for (const auto& f : p.figures) {
    if (f.value <= 0) {
      say(out, "  {:<62} {:>9} {:<8} {}\n", f.label, "-", f.unit, f.note);
      continue;
    }
    const auto [lo, hi] = std::minmax_element(f.samples.begin(), f.samples.end());
    say(out, "  {:<62} {:>9} {:<8} ({}..{}, {} of {})\n", f.label, figure_text(f.value), f.unit, figure_text(*lo),
        figure_text(*hi), f.statistic(), f.samples.size());
  }
  say(out, "  measured {} in {:.1f} s at load average {}{}\n\n", p.measured_at, p.seconds,
      p.load_average >= 0 ? fmt::format("{:.2f}", p.load_average) : "unknown",
      cached ? " (from the cache; --remeasure measures again)" : "");
}

core::TrainConfig gpu_config(int device) {
  core::TrainConfig c;
  c.backends = {"gpu"};
  c.device = device;
  return c;
}

constexpr core::IntRule kRepeats{"--repeats", "the number of timed repeats per figure", 5, 100};
constexpr core::IntRule kStreamMib{"--stream-mib", "the STREAM array size in MiB", 0, 16384,
                                   "0: automatic; else at least 16"};

}  // namespace

CLI::App* add_peaks_command(CLI::App& parent, PeaksOptions& o) {
  CLI::App* p = parent.add_subcommand(
      "peaks", "Show the measured peaks of the GPU and the CPU (memory bandwidth, FMA throughput, dispatch costs): "
               "the ceilings of the rooflines, measured once per device and cached");
  p->add_option("--backend", o.backend, "Devices: gpu, cpu or gpu,cpu")->type_name("NAME[,NAME]");
  p->add_option("--device", o.device, "Vulkan device index from `trainscope devices` (-1: the best one)")
      ->type_name("N")->check(checked(core::rules::device));
  p->add_flag("--remeasure", o.remeasure, "Measure again even if the cache has figures for the device");
  p->add_option("--repeats", o.repeats,
                "Timed repeats per figure, 5..100 (a rate's best and a time's median are shown)")
      ->check(checked(kRepeats));
  p->add_option("--stream-mib", o.stream_mib,
                "CPU: the size of each STREAM array in MiB, 16..16384 (0: 4x the last-level cache, 64..128 MiB); a "
                "CPU whose cores each reach more than 32 MiB of cache needs larger arrays")
      ->type_name("MIB")->check(checked(kStreamMib));
  p->add_option("--report", o.report, "Write the figures as JSON to FILE (-: standard output, the table to stderr)")
      ->check(non_empty("--report", "a file name, or - for standard output"))
      ->type_name("FILE.json")
      ->default_str("none");
  p->footer(
      "Figures (a rate is the best of its repeats: noise only slows a repeat down; a time is their median;\n"
      "GB/s = 1e9 bytes/s, GFLOP/s = 1e9 FLOP/s, an FMA counted as 2):\n"
      "  GPU memory bandwidth, copy shader (GB/s): a compute shader copies a 256 MiB buffer into another,\n"
      "    16 bytes per access; (read + write bytes) / the time between timestamp queries.\n"
      "  GPU memory bandwidth, vkCmdCopyBuffer (GB/s): the driver's copy of 256 MiB, timed the same way.\n"
      "  GPU fp32 FMA, scalar and vec4 (GFLOP/s): 1024 x 256 invocations, each 8 independent chains\n"
      "    acc = fma(acc, m, c), nothing loaded or stored (as vkpeak); fp16 FMA (f16vec4) the same, where the\n"
      "    device has shaderFloat16.\n"
      "  GPU dispatch round trip (us): vkQueueSubmit of one empty dispatch until vkWaitForFences returns,\n"
      "    host clock.\n"
      "  GPU back-to-back dispatch (us): 256 empty dispatches in one command buffer, a barrier after each (as\n"
      "    in a training step); timestamp time / 256.\n"
      "  CPU STREAM copy and triad (GB/s), 1 thread and all: McCalpin's loops c = a and a = b + s*c over\n"
      "    arrays of 4x the last-level cache (64..128 MiB; --stream-mib) on the kernels' thread pool;\n"
      "    16 / 24 bytes per element (one / two reads and a write) / wall time.\n"
      "  CPU fp32 FMA (GFLOP/s), 1 thread and all, at the SIMD width the kernels use and at every other\n"
      "    width the CPU has (AVX-512 zmm, AVX2 ymm): independent FMA chains, each thread charged its own\n"
      "    CPU time.\n"
      "A software Vulkan device (lavapipe) is labelled so: its figures are the CPU's. The cache is\n"
      "$XDG_CACHE_HOME/trainscope/peaks.json (~/.cache/... without it), keyed by the Vulkan deviceUUID and\n"
      "driver version, and by the CPU model and thread count. Measure on a quiet machine: other programs\n"
      "lower the figures (the load average is recorded with them).");
  return p;
}

int run_peaks(PeaksOptions& o) {
  core::check(kRepeats, o.repeats);  // also checked by CLI11; here for callers that fill PeaksOptions themselves
  const std::vector<std::string> backends = parse_backends(o.backend, "gpu, cpu, or gpu,cpu");
  const bool gpu = std::find(backends.begin(), backends.end(), "gpu") != backends.end();
  if (gpu && o.device >= 0) check_device_index(o.device);
  core::check(kStreamMib, o.stream_mib);
  if (o.stream_mib > 0 && o.stream_mib < 16)  // arrays that fit in a cache measure the cache, not the memory
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--stream-mib {}: {} must be 0 (automatic) or 16..16384 (smaller arrays stay in a "
                                  "cache)", o.stream_mib, kStreamMib.what));
  if (!o.report.empty()) core::check_output_path(o.report, "--report");
  const std::filesystem::path cache = core::default_peaks_path();
  // What measuring will hold (only the devices that will be measured), before anything is allocated.
  core::MemoryNeed need;
  auto measures = [&](const std::string& backend) {
    if (o.remeasure) return true;
    try {
      return !core::find_cached_peaks(cache, run::peaks_key(backend, o.device)).has_value();
    } catch (const core::Error&) {
      return false;  // no Vulkan: nothing is measured, the table says why
    }
  };
  for (const auto& backend : backends) {
    if (!measures(backend)) continue;
    if (backend == "cpu") {
      const double array = o.stream_mib > 0 ? double(o.stream_mib) * (1 << 20) : double(cpu::stream_array_bytes());
      need.add(fmt::format("STREAM's 3 arrays of {}", core::memory_text(array)), 3 * array);
    } else if (run::gpu_memory_on_host(gpu_config(o.device))) {
      need.add("the GPU's copy buffers (software Vulkan: host memory)", 2.0 * gpu::kPeakCopyBytes);
    }
  }
  core::check_host_memory(need, "--stream-mib: measuring", "give a smaller --stream-mib (0: automatic)");
  std::FILE* out = o.report == "-" ? stderr : stdout;
  say(out, "trainscope peaks: measured device peaks, the ceilings of the rooflines ({})\n\n",
      cache.empty() ? fmt::format("no cache: {}", platform::why_no_cache_dir()) : "the cache: " + cache.string());
  flush(out);
  const auto progress = [](const std::string& what) { std::cerr << "peaks: measuring " << what << "...\n"; };
  nlohmann::json report = {{"cache", cache.string()}, {"devices", nlohmann::json::array()}};
  int code = 0;
  for (const auto& backend : backends) {
    try {
      const run::PeaksLookup found = run::lookup_peaks(
          backend, o.device, o.remeasure ? run::PeaksPolicy::Remeasure : run::PeaksPolicy::MeasureIfMissing, cache,
          progress, o.repeats, static_cast<size_t>(o.stream_mib) << 20);
      if (!found.warning.empty()) std::cerr << "trainscope: warning: " << found.warning << "\n";
      print_peaks(out, found.peaks, found.cached);
      // Measured but not written (the cache's lock held 30 s, a read-only folder): said where the figures are, not
      // only on stderr (issue 34: the header's "cached in" was all stdout said).
      if (!found.cached && !found.saved && !found.peaks.figures.empty())
        say(out, "{}: measured, but not cached ({}): the next run measures them again\n\n",
            backend == "gpu" ? "GPU" : "CPU", found.warning.empty() ? "no cache" : found.warning);
      nlohmann::json j = core::peaks_to_json(found.peaks);
      j["cached"] = found.cached;
      report["devices"].push_back(j);
    } catch (const core::Error& e) {
      if (e.kind() == core::ErrorKind::InvalidArgument) throw;
      say(out, "{}: not measured: {}\n\n", backend == "gpu" ? "GPU" : "CPU", e.what());
      code = 1;
    }
    flush(out);
  }
  if (!o.report.empty()) {
    try {
      core::write_json_atomically(o.report, report);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      return 1;
    }
  }
  return code;
}

}  // namespace app
