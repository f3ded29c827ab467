// The end-of-run summary of `trainscope train`: per-kernel tables, devices, the GPU/CPU speedup and its caveats;
// and the small text-table helpers behind it.
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"
#include "core/peaks.hpp"

namespace app {

// 1234567.8 -> "1,234,568" (rounded to an integer).
std::string group_thousands(double value);

// 51200 -> "51.2 k", 3.2e9 -> "3.20 G": three significant digits and a decimal prefix (for FLOP, B, ...).
std::string with_si_prefix(double value);

// A duration for people: "12.3 ms" under 0.1 s, else "4.56 s".
std::string format_seconds(double seconds);

// Columns aligned, the first left-aligned and the others right-aligned; a row that is empty draws a rule.
std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// The kernel table of one backend: kernel, calls, mean ms, % of step, GFLOP/s, GB/s, and the whole step.
std::string kernel_table(const core::KernelTable& table);

// A backend's achieved rate over a run: its kernel table's "step (total)" GFLOP/s (the plan's analytic FLOPs over the
// kernels' time) and, for the CPU, the threads it ran (0: all hardware threads).
struct AchievedRate {
  std::string backend;  // "gpu" | "cpu"
  double gflops = 0;
  int threads = 0;
};

// Each backend's achieved rate as a share of its measured fp32 FMA peak in `peaks` (core::roof_ceilings; the CPU's
// at its kernels' SIMD width and thread count), so that a speedup can be read with how much of each device the code
// used: on an NVIDIA H200 and its 16-core host the classic benchmark ran at 29% and 30% of them (docs/benchmarks.md).
// "" when no backend has a rate; a backend without peaks, or whose CPU peak was measured on another thread count, is
// said so instead of a share, and with no peaks cached at all the line is one hint to run `trainscope peaks`. E.g.
// "of the measured fp32 FMA peak: gpu 29% of 53,841 GFLOP/s (fp32 FMA: scalar), cpu 30% of 2,317 GFLOP/s (fp32 FMA:
// AVX-512 (kernels', widest), 16 threads)".
std::string peak_share_line(const std::vector<AchievedRate>& rates, const std::vector<core::BackendPeaks>& peaks);

struct SummaryContext {
  bool gpu_is_software = false;  // the Vulkan device that ran is lavapipe/SwiftShader (from vk::DeviceInfo)
  unsigned cores = 0;            // hardware threads of this machine (0: ask std::thread)
  std::vector<core::BackendPeaks> peaks;  // the devices' cached peaks (run::cached_peaks), for peak_share_line
};

// Prints the kernel tables of every backend, its device, the speedup and the caveats that apply to it, on stdout.
void print_summary(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs, SummaryContext context);

}  // namespace app
