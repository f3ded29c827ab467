// The end-of-run summary of `trainscope train`: per-kernel tables, devices, the GPU/CPU speedup and its caveats;
// and the small text-table helpers behind it.
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"

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

struct SummaryContext {
  bool gpu_is_software = false;  // the Vulkan device that ran is lavapipe/SwiftShader (from vk::DeviceInfo)
  unsigned cores = 0;            // hardware threads of this machine (0: ask std::thread)
};

// Prints the kernel tables of every backend, its device, the speedup and the caveats that apply to it, on stdout.
void print_summary(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs, SummaryContext context);

}  // namespace app
