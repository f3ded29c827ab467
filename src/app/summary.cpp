// Text tables and the end-of-run summary: what a teacher reads off the terminal after a run.
#include "app/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "app/print.hpp"
#include "core/speedup.hpp"

namespace app {
namespace {

// Both backends at once on this many hardware threads or fewer disturb each other's timings noticeably.
constexpr unsigned kFewCores = 8;

// Three significant digits without an exponent: 0.000312, 0.0436, 1.03, 51.1 (fixed decimals would hide CPU
// kernels of a few microseconds).
std::string format_ms(double ms) {
  if (!(ms > 0)) return "0";
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(ms))), 1, 7);
  return fmt::format("{:.{}f}", ms, decimals);
}

std::vector<std::string> row_cells(const core::KernelRow& r) {
  return {r.name,
          fmt::format("{}", r.calls),
          format_ms(r.mean_ms),
          fmt::format("{:.1f}", r.pct_of_step),
          fmt::format("{:.2f}", r.gflops),
          fmt::format("{:.2f}", r.gbps)};
}

// Bytes for people: "0.9 MiB", "215 MiB", or "12.5 KiB" under 0.1 MiB (KiB, MiB = 2^10, 2^20 bytes).
std::string format_bytes(size_t bytes) {
  const double mib = static_cast<double>(bytes) / (1 << 20);
  if (mib < 0.1) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return mib < 100 ? fmt::format("{:.1f} MiB", mib) : fmt::format("{:.0f} MiB", mib);
}

// "memory: weights 0.9 MiB, gradients 0.9 MiB, ..., dataset 215 MiB (total 219 MiB)", from Trainer::memory_usage().
std::string memory_line(const core::MemoryUsage& m) {
  std::string out = "memory: weights " + format_bytes(m.weights);
  if (m.master_weights > 0) out += ", master weights " + format_bytes(m.master_weights);
  out += ", gradients " + format_bytes(m.gradients) + ", optimizer state " + format_bytes(m.optimizer_state) +
         ", activations " + format_bytes(m.activations) +
         (m.attention_scores > 0 ? ", attention scores " + format_bytes(m.attention_scores) : std::string()) +
         ", workspace " + format_bytes(m.workspace) + ", dataset " +
         (m.dataset > 0 ? format_bytes(m.dataset) : std::string("read in place"));
  return out + " (total " + format_bytes(m.total()) + ")";
}

const core::BackendRun* find(const std::vector<core::BackendRun>& runs, const std::string& name) {
  for (const auto& r : runs)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

std::string group_thousands(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  const std::string digits = fmt::format("{:.0f}", std::fabs(value));
  std::string out = value <= -0.5 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string with_si_prefix(double value) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P"};
  int p = 0;
  while (std::fabs(value) >= 999.5 && p < 5) value /= 1000, ++p;
  return fmt::format("{:.3g} {}", value, prefixes[p]);
}

std::string format_seconds(double seconds) {
  return seconds < 0.1 ? fmt::format("{:.1f} ms", seconds * 1e3) : fmt::format("{:.2f} s", seconds);
}

std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  auto line = [&](const std::vector<std::string>& cells) {
    if (cells.empty()) return std::string(total - 2, '-') + "\n";
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      out += c == 0 ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("  {:>{}}", cell, width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string kernel_table(const core::KernelTable& table) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : table.rows()) rows.push_back(row_cells(r));
  rows.emplace_back();  // a rule above the whole step
  rows.push_back(row_cells(table.step_row()));
  return format_table({"kernel", "calls", "mean ms", "% of step", "GFLOP/s", "GB/s"}, rows);
}

void print_summary(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs, SummaryContext context) {
  for (const auto& r : runs) {
    say("\n{}: {}\n", r.name, r.device.empty() ? "(no device)" : r.device);
    if (!r.error.empty()) say("  stopped: {}\n", r.error);
    if (r.memory.total() > 0) say("{}\n", memory_line(r.memory));
    if (r.config.precision != core::Precision::FP32 && r.memory_fp32.total() > 0) {
      const core::MemoryUsage& f = r.memory_fp32;
      say("{} vs fp32: weights as read {} vs {}, gradients {} vs {}, activations {} vs {}; fp32 masters {}\n",
          core::to_string(r.config.precision), format_bytes(r.memory.weights), format_bytes(f.weights),
          format_bytes(r.memory.gradients), format_bytes(f.gradients), format_bytes(r.memory.activations),
          format_bytes(f.activations), format_bytes(r.memory.master_weights));
    }
    if (r.config.precision == core::Precision::FP16)
      say("fp16 loss scaling: {} step{} skipped after an overflow (weights unchanged); loss scale of the last step "
          "{:g}\n",
          r.skipped_steps, r.skipped_steps == 1 ? "" : "s", r.loss_scale);
    if (r.kernels.untimed_steps() > 0) {
      say("  kernel times unavailable: the device has no timestamp queries on its compute queue "
          "(timestampValidBits 0); {} steps trained untimed\n",
          r.kernels.untimed_steps());
      continue;
    }
    if (r.kernels.steps() == 0) {
      if (r.kernels.steps_seen() > 0) say("  no timed steps: the first {} are warm-up\n", r.kernels.warmup());
      continue;
    }
    say("{}", kernel_table(r.kernels));
    say("{} steps timed with {} (the first {} left out as warm-up);\n"
        "GFLOP/s = analytic FLOPs / time, GB/s = compulsory bytes / time (a lower bound of the real traffic)\n",
        r.kernels.steps(), r.name == "gpu" ? "Vulkan timestamp queries" : "the wall clock",
        r.kernels.warmup() == 1 ? std::string("step") : fmt::format("{} steps", r.kernels.warmup()));
  }

  std::vector<AchievedRate> rates;
  for (const auto& r : runs)
    if (r.kernels.steps() > 0 && r.kernels.untimed_steps() == 0)
      rates.push_back({r.name, r.kernels.step_row().gflops, r.name == "cpu" ? r.config.threads : 0});
  if (const std::string line = peak_share_line(rates, context.peaks); !line.empty()) say("{}\n", line);

  const core::BackendRun* gpu = find(runs, "gpu");
  const core::BackendRun* cpu = find(runs, "cpu");
  if (!gpu || !cpu) return;
  // One rule with the dashboard (core/speedup.hpp): a figure only when both did the same work per step.
  const core::Speedup speedup = core::run_speedup(*gpu, *cpu);
  if (!speedup.ok()) {
    say("\nspeedup GPU/CPU: - ({})\n", speedup.reason);
    return;
  }
  const double s = speedup.value;
  say("\nspeedup GPU/CPU: {:.3g}x in samples/s (gpu {}, cpu {} samples/s){}\n", s, group_thousands(speedup.gpu_rate),
      group_thousands(speedup.cpu_rate), s < 1 ? fmt::format(": the CPU was {:.3g}x faster", 1 / s) : "");
  const bool software = context.gpu_is_software || gpu->device.find("software") != std::string::npos;
  if (software)
    say("note: this GPU is software Vulkan running on the CPU: the speedup compares two CPU implementations\n");
  const unsigned cores = context.cores > 0 ? context.cores : std::max(1u, std::thread::hardware_concurrency());
  if (!cfg.sequential && (software || cores <= kFewCores))
    say("note: both backends shared {} cores; use --sequential for undisturbed timings\n", cores);
}

std::string peak_share_line(const std::vector<AchievedRate>& rates, const std::vector<core::BackendPeaks>& peaks) {
  std::vector<std::string> parts;
  bool any_peaks = false;  // none in the cache (trainscope peaks never ran here): one hint instead of a part each
  for (const AchievedRate& r : rates) {
    if (!(r.gflops > 0)) continue;
    const auto it = std::find_if(peaks.begin(), peaks.end(), [&](const core::BackendPeaks& b) {
      return b.backend == r.backend && b.peaks.has_value();
    });
    if (it == peaks.end()) {
      parts.push_back(fmt::format("{} not in the peaks cache (trainscope peaks measures it)", r.backend));
      continue;
    }
    any_peaks = true;
    if (r.backend == "cpu" && r.threads > 1 && r.threads != it->peaks->threads) {
      parts.push_back(
          fmt::format("cpu: its peak was measured on {} threads, this run used {}", it->peaks->threads, r.threads));
      continue;
    }
    const core::RoofCeilings c = core::roof_ceilings(*it->peaks, r.threads);
    if (c.compute_gflops > 0)
      parts.push_back(fmt::format("{} {:.0f}% of {} GFLOP/s ({})", r.backend, 100 * r.gflops / c.compute_gflops,
                                  group_thousands(c.compute_gflops), c.compute_from));
  }
  if (parts.empty()) return "";
  std::string line = "of the measured fp32 FMA peak: ";
  if (!any_peaks) return line + "not measured on this machine yet (trainscope peaks measures the devices once)";
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  return line;
}

}  // namespace app
