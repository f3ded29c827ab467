// `trainscope bench`'s tables (bench_tables.hpp): the measurements of bench_backends.cpp and bench_gpu.cpp printed
// and added to the report.
#include "app/bench_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "app/print.hpp"
#include "core/error.hpp"
#include "core/peaks.hpp"
#include "cpu/fma_probe.hpp"
#include "cpu/gemm.hpp"
#include "cpu/simd.hpp"
#include "run/peaks.hpp"

namespace app {
namespace {

std::string threads_text(int t) { return fmt::format("{} thread{}", t, t == 1 ? "" : "s"); }

// kernel_column: the GPU's rows, one per GEMM variant, name theirs.
void print_table(std::FILE* out, const std::vector<BenchRow>& rows, const std::vector<std::string>& cores,
                 bool kernel_column = false) {
  std::string header = fmt::format("{:<12} {:<16} {:>5} {:>5} {:>5} {:>9} {:>9} {:>7}", "shape", "form", "M", "N", "K",
                                   "ms", "GFLOP/s", "% peak");
  for (const auto& c : cores) header += fmt::format("  {:>17} {:>6}", "OpenBLAS " + c, "ratio");
  if (kernel_column) header += "  variant";
  say(out, "{}\n", header);
  for (const auto& r : rows) {
    std::string line = fmt::format("{:<12} {:<16} {:>5} {:>5} {:>5} {:>9.3f} {:>9.1f} {:>7}", r.gemm.label, r.gemm.form,
                                   r.gemm.M(), r.gemm.N(), r.gemm.K(), r.ms, r.gflops,
                                   r.peak_gflops > 0 ? fmt::format("{:.1f}", 100.0 * r.gflops / r.peak_gflops) : "-");
    for (const auto& f : r.openblas)
      line += fmt::format("  {:>17.1f} {:>5.2f}x", f.gflops, f.gflops > 0 ? r.gflops / f.gflops : 0.0);
    if (kernel_column) line += "  " + r.kernel;
    say(out, "{}\n", line);
  }
  say(out, "\n");
}

nlohmann::json row_json(const BenchRow& r) {
  nlohmann::json j = {{"backend", r.backend},    {"device", r.device},  {"kernel", r.kernel}, {"threads", r.threads},
                      {"shape", r.gemm.label},   {"form", r.gemm.form}, {"batch", r.gemm.B},  {"inputs", r.gemm.C},
                      {"outputs", r.gemm.OC},    {"M", r.gemm.M()},     {"N", r.gemm.N()},    {"K", r.gemm.K()},
                      {"flops", r.gemm.flops()}, {"ms", r.ms},          {"gflops", r.gflops}, {"split_k", r.split_k}};
  // A split-K row: the unsplit row's time of the same configuration in the same run, and unsplit / split.
  j["split_k_speedup"] = r.unsplit_ms > 0 ? nlohmann::json(r.unsplit_ms / r.ms) : nlohmann::json(nullptr);
  j["peak_gflops"] = r.peak_gflops > 0 ? nlohmann::json(r.peak_gflops) : nlohmann::json(nullptr);
  j["percent_of_peak"] = r.peak_gflops > 0 ? nlohmann::json(100.0 * r.gflops / r.peak_gflops) : nlohmann::json(nullptr);
  nlohmann::json ob = nlohmann::json::array();
  for (const auto& f : r.openblas)
    ob.push_back({{"coretype_requested", f.requested.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.requested)},
                  {"core", f.core},
                  {"ms", f.ms},
                  {"gflops", f.gflops},
                  {"ratio", f.gflops > 0 ? r.gflops / f.gflops : 0.0}});
  j["openblas"] = ob;
  return j;
}

// The FMA peak per thread count: at the width the GEMM runs (the active SIMD level) and at the widest. Taken from the
// peaks cache (`trainscope peaks`: 1 thread and all) where it has the figure, else measured now. Returns the active
// level's peak per thread count (the tables' "% peak"), where the GEMM runs a micro-kernel.
std::map<long, double> cpu_fma_peaks(const BenchSetup& s, BenchOutput& o) {
  const run::PeaksLookup lookup =
      run::lookup_peaks("cpu", -1, run::PeaksPolicy::CachedOnly, core::default_peaks_path());
  if (!lookup.warning.empty()) std::cerr << "trainscope: warning: " << lookup.warning << "\n";
  const std::optional<core::DevicePeaks> cached =
      lookup.cached ? std::optional<core::DevicePeaks>(lookup.peaks) : std::nullopt;
  std::map<long, double> peak_of_threads;
  nlohmann::json peaks = nlohmann::json::array();
  for (long t : s.threads)
    for (cpu::SimdLevel level : {cpu::SimdLevel::AVX512, cpu::SimdLevel::AVX2, cpu::SimdLevel::NEON}) {
      if (!cpu::simd_level_available(level)) continue;
      const std::string id = fmt::format("fma_{}_{}",
                                         level == cpu::SimdLevel::AVX512 ? "avx512"
                                         : level == cpu::SimdLevel::NEON ? "neon"
                                                                         : "avx2",
                                         t == 1 ? "1t" : "nt");
      const core::PeakFigure* f =
          cached && (t == 1 || t == static_cast<long>(std::max(1u, std::thread::hardware_concurrency())))
              ? cached->find(id)
              : nullptr;
      cpu::FmaPeak p;
      if (f && f->value > 0) {
        p.level = level;
        p.threads = static_cast<int>(t);
        p.gflops = f->value;
        p.samples = f->samples;
      } else {
        std::cerr << "bench: measuring the CPU's FMA peak (independent FMA chains), " << cpu::to_string(level) << ", "
                  << threads_text(static_cast<int>(t)) << "...\n";
        p = cpu::measure_fma_peak(level, static_cast<int>(t));
      }
      if (level == cpu::active_simd_level() && cpu::active_micro_kernel()) peak_of_threads[t] = p.gflops;
      say(o.out, "cpu FMA peak, {}, {}: {:.1f} GFLOP/s (median of {}{})\n", cpu::to_string(level),
          threads_text(static_cast<int>(t)), p.gflops, p.samples.size(),
          f ? ", from the peaks cache, measured " + cached->measured_at : "");
      peaks.push_back({{"simd", cpu::to_string(level)},
                       {"threads", t},
                       {"gflops", p.gflops},
                       {"samples", p.samples},
                       {"cached", f != nullptr}});
    }
  o.report["cpu_fma_peaks"] = peaks;
  return peak_of_threads;
}

}  // namespace

void bench_cpu_tables(const BenchSetup& s, BenchOutput& o) {
  std::map<long, double> peak_of_threads = cpu_fma_peaks(s, o);
  const int l2_kb = s.l2_kb;
  o.report["openblas_l2_kb"] = l2_kb;
  say(o.out, "cpu GEMM micro-kernel: {}; each call timed with {}\n", cpu::gemm_kernel_name(),
      s.clock == BenchClock::Wall ? "the wall clock" : "the calling thread's CPU time");
  std::string blas_note = s.cores.empty() ? "OpenBLAS: not compared (--openblas none)" : "OpenBLAS columns:";
  for (const auto& c : s.cores)
    blas_note += fmt::format(" [{}]", c.empty() ? "OPENBLAS_CORETYPE unset (its default)" : "OPENBLAS_CORETYPE=" + c);
  if (!s.cores.empty())
    blas_note += fmt::format(", OPENBLAS_L2_SIZE={}", l2_kb > 0 ? std::to_string(l2_kb) : std::string("unset"));
  say(o.out, "{}\n\n", blas_note);
  // Case by case, trainscope and then each OpenBLAS core type, so that a change of the machine's load during the
  // run affects both sides of a ratio alike.
  for (long t : s.threads) {
    const std::string what = fmt::format("cpu, {}", threads_text(static_cast<int>(t)));
    std::vector<BenchRow> rows;
    bool reference_ok = !s.cores.empty();
    for (size_t i = 0; i < s.cases.size(); ++i) {
      bench_progress(what, i, s.cases.size());
      BenchRow row = bench_cpu({s.cases[i]}, static_cast<int>(t), s.repeats, s.min_seconds, s.clock).front();
      row.peak_gflops = peak_of_threads.count(t) ? peak_of_threads[t] : 0.0;
      for (size_t c = 0; reference_ok && c < s.cores.size(); ++c) {
        try {
          row.openblas.push_back(
              bench_openblas({s.cases[i]}, static_cast<int>(t), s.cores[c], l2_kb, s.repeats, s.min_seconds, s.clock)
                  .front());
        } catch (const core::Error& e) {
          std::cerr << "\ntrainscope: warning: OpenBLAS reference: " << e.what() << "\n";
          ++o.failures;
          reference_ok = false;
        }
      }
      rows.push_back(std::move(row));
    }
    bench_progress(what, s.cases.size(), s.cases.size());
    std::vector<std::string> labels;
    if (!reference_ok)  // a failed reference: no column is better than a partial one
      for (auto& r : rows) r.openblas.clear();
    else
      for (const auto& f : rows.front().openblas) labels.push_back(f.core + (f.requested.empty() ? " (default)" : ""));
    say(o.out, "cpu: {}\n", rows.front().device);
    print_table(o.out, rows, labels);
    for (const auto& r : rows) o.rows.push_back(row_json(r));
  }
}

void bench_gpu_table(const BenchSetup& s, BenchOutput& o) {
  try {
    // GPU timings on a software device are slow: fewer timed calls (still the median of at least 3).
    const std::vector<BenchRow> rows = bench_gpu(s.cases, s.device, std::min(s.repeats, 3));
    if (!rows.empty()) {
      say(o.out, "gpu: {}\n", rows[0].device);
      say(o.out,
          "gpu FMA peak, fp32: {:.1f} GFLOP/s (the peak_fma probe of trainscope peaks: independent vec4 fma chains, "
          "median of 3)\n",
          rows[0].peak_gflops);
      o.report["gpu_fma_peak_gflops"] = rows[0].peak_gflops;
    }
    print_table(o.out, rows, {}, true);
    for (const auto& r : rows) o.rows.push_back(row_json(r));
  } catch (const core::Error& e) {
    std::cerr << "trainscope: error: gpu: " << e.what() << "\n";
    ++o.failures;
  }
}

}  // namespace app
