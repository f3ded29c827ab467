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
#include "cpu/peak_probe.hpp"
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

// The SIMD levels whose GEMMs the bench measures: the active one (the CPU's, or lower by TRAINSCOPE_CPU_SIMD) and,
// below AVX-512, AVX2 (what most teachers' laptops have), widest first.
std::vector<cpu::SimdLevel> bench_levels() {
  const cpu::SimdLevel active = cpu::active_simd_level();
  if (active == cpu::SimdLevel::AVX512) return {cpu::SimdLevel::AVX512, cpu::SimdLevel::AVX2};
  return {active};
}

// The best OpenBLAS 0.3.21 core type for `level`'s GEMMs (OPENBLAS_CORETYPE names; "" where none is better than
// OpenBLAS's own choice).
std::string best_openblas_core(cpu::SimdLevel level) {
  switch (level) {
    case cpu::SimdLevel::AVX512: return "SkylakeX";
    case cpu::SimdLevel::AVX2: return "Haswell";
    case cpu::SimdLevel::NEON:  // OpenBLAS's own choice on ARM
    case cpu::SimdLevel::Portable: break;
  }
  return "";
}

// The comparison columns' OPENBLAS_CORETYPE values for `level` ("" = OpenBLAS's default), each once.
std::vector<std::string> openblas_cores(const BenchSetup& s, cpu::SimdLevel level) {
  std::vector<std::string> cores;
  for (const std::string& c : s.openblas) {
    const std::string core = c == "default" ? "" : c == "best" ? best_openblas_core(level) : c;
    if (c == "best" && core.empty()) continue;
    if (std::find(cores.begin(), cores.end(), core) == cores.end()) cores.push_back(core);
  }
  return cores;
}

// The FMA peak per SIMD level and thread count, taken from the peaks cache (`trainscope peaks`: 1 thread and all)
// where it has the figure, else measured now. Returns each level's peak per thread count (the tables' "% peak").
std::map<std::pair<cpu::SimdLevel, long>, double> cpu_fma_peaks(const BenchSetup& s, BenchOutput& o) {
  const run::PeaksLookup lookup =
      run::lookup_peaks("cpu", -1, run::PeaksPolicy::CachedOnly, core::default_peaks_path());
  if (!lookup.warning.empty()) std::cerr << "trainscope: warning: " << lookup.warning << "\n";
  const std::optional<core::DevicePeaks> cached =
      lookup.cached ? std::optional<core::DevicePeaks>(lookup.peaks) : std::nullopt;
  const long all = static_cast<long>(std::max(1u, std::thread::hardware_concurrency()));
  std::map<std::pair<cpu::SimdLevel, long>, double> peak;
  nlohmann::json peaks = nlohmann::json::array();
  for (long t : s.threads)
    for (cpu::SimdLevel level : {cpu::SimdLevel::AVX512, cpu::SimdLevel::AVX2, cpu::SimdLevel::NEON}) {
      if (!cpu::simd_level_available(level)) continue;
      const core::PeakFigure* f =
          cached && (t == 1 || t == all) ? cached->find(cpu::fma_peak_id(level, t != 1)) : nullptr;
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
      peak[{level, t}] = p.gflops;
      say(o.out, "cpu FMA peak, {}, {}: {:.1f} GFLOP/s (the best of {}{})\n", cpu::to_string(level),
          threads_text(static_cast<int>(t)), p.gflops, p.samples.size(),
          f ? ", from the peaks cache, measured " + cached->measured_at : "");
      peaks.push_back({{"simd", cpu::to_string(level)},
                       {"threads", t},
                       {"gflops", p.gflops},
                       {"samples", p.samples},
                       {"cached", f != nullptr}});
    }
  o.report["cpu_fma_peaks"] = peaks;
  return peak;
}

// One table: every case on `threads` threads at the active SIMD level, trainscope then each OpenBLAS core type case
// by case (a change of the machine's load affects both sides of a ratio alike).
std::vector<BenchRow> cpu_table(const BenchSetup& s, long threads, double peak, const std::vector<std::string>& cores,
                                BenchOutput& o) {
  const std::string what =
      fmt::format("cpu, {}, {}", cpu::to_string(cpu::active_simd_level()), threads_text(static_cast<int>(threads)));
  std::vector<BenchRow> rows;
  bool reference_ok = !cores.empty();
  for (size_t i = 0; i < s.cases.size(); ++i) {
    bench_progress(what, i, s.cases.size());
    BenchRow row = bench_cpu({s.cases[i]}, static_cast<int>(threads), s.repeats, s.min_seconds, s.clock).front();
    row.peak_gflops = cpu::active_micro_kernel() ? peak : 0.0;
    for (size_t c = 0; reference_ok && c < cores.size(); ++c) {
      try {
        row.openblas.push_back(bench_openblas({s.cases[i]}, static_cast<int>(threads), cores[c], s.l2_kb, s.repeats,
                                              s.min_seconds, s.clock)
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
  if (!reference_ok)  // a failed reference: no column is better than a partial one
    for (auto& r : rows) r.openblas.clear();
  return rows;
}

// The square GEMMs of one table against OpenBLAS's best core for its level and the FMA peak: "squares, 1 thread:
// 0.94-1.08x (median 1.01x) OpenBLAS Haswell; 83-91% (median 88%) of the FMA peak", and the figures for the report.
struct SquaresSummary {
  std::string text;  // "" when the table has no square with a figure to compare
  nlohmann::json figures = nlohmann::json::object();
};

SquaresSummary squares_summary(const std::vector<BenchRow>& rows, const std::string& best, long threads) {
  std::vector<double> ratios, shares;
  for (const BenchRow& r : rows) {
    if (r.gemm.label.rfind("square", 0) != 0) continue;
    for (const OpenBlasFigure& f : r.openblas)
      if (!best.empty() && f.requested == best && f.gflops > 0) ratios.push_back(r.gflops / f.gflops);
    if (r.peak_gflops > 0) shares.push_back(100.0 * r.gflops / r.peak_gflops);
  }
  SquaresSummary out;
  if (ratios.empty() && shares.empty()) return out;
  out.text = fmt::format("squares, {}:", threads_text(static_cast<int>(threads)));
  auto add = [&](std::vector<double> v, const char* name, const char* unit, int digits) {
    std::sort(v.begin(), v.end());
    const double median = v[v.size() / 2];
    out.figures[name] = {{"min", v.front()}, {"median", median}, {"max", v.back()}};
    return fmt::format("{:.{}f}-{:.{}f}{} (median {:.{}f}{})", v.front(), digits, v.back(), digits, unit, median,
                       digits, unit);
  };
  if (!ratios.empty()) out.text += fmt::format(" {} OpenBLAS {}", add(ratios, "ratio_to_openblas", "x", 2), best);
  if (!shares.empty())
    out.text += fmt::format("{} {} of the FMA peak", ratios.empty() ? "" : ";", add(shares, "percent_of_peak", "%", 0));
  if (!ratios.empty()) out.figures["openblas_core"] = best;
  return out;
}

}  // namespace

void bench_cpu_tables(const BenchSetup& s, BenchOutput& o) {
  const std::map<std::pair<cpu::SimdLevel, long>, double> peaks = cpu_fma_peaks(s, o);
  o.report["openblas_l2_kb"] = s.l2_kb;
  const cpu::SimdLevel active = cpu::active_simd_level();
  std::vector<std::string> summary;
  nlohmann::json levels = nlohmann::json::array();
  for (const cpu::SimdLevel level : bench_levels()) {
    cpu::set_simd_level(level);
    const std::vector<std::string> cores = openblas_cores(s, level);
    say(o.out, "\ncpu SIMD level {}: GEMM micro-kernel {}; each call timed with {}\n", cpu::to_string(level),
        cpu::gemm_kernel_name(), s.clock == BenchClock::Wall ? "the wall clock" : "the calling thread's CPU time");
    std::string blas_note = cores.empty() ? "OpenBLAS: not compared (--openblas none)" : "OpenBLAS columns:";
    for (const auto& c : cores)
      blas_note += fmt::format(" [{}]", c.empty() ? "OPENBLAS_CORETYPE unset (its default)" : "OPENBLAS_CORETYPE=" + c);
    if (!cores.empty())
      blas_note += fmt::format(", OPENBLAS_L2_SIZE={}", s.l2_kb > 0 ? std::to_string(s.l2_kb) : std::string("unset"));
    say(o.out, "{}\n\n", blas_note);
    for (long t : s.threads) {
      const auto peak = peaks.find({level, t});
      const std::vector<BenchRow> rows = cpu_table(s, t, peak == peaks.end() ? 0.0 : peak->second, cores, o);
      std::vector<std::string> labels;
      for (const auto& f : rows.front().openblas) labels.push_back(f.core + (f.requested.empty() ? " (default)" : ""));
      say(o.out, "cpu: {}\n", rows.front().device);
      print_table(o.out, rows, labels);
      for (const auto& r : rows) {
        nlohmann::json j = row_json(r);
        j["simd"] = cpu::to_string(level);
        o.rows.push_back(std::move(j));
      }
      if (const SquaresSummary sq = squares_summary(rows, best_openblas_core(level), t); !sq.text.empty()) {
        summary.push_back(fmt::format("{} {}", cpu::to_string(level), sq.text));
        nlohmann::json j = sq.figures;
        j["simd"] = cpu::to_string(level);
        j["threads"] = t;
        levels.push_back(std::move(j));
      }
    }
  }
  cpu::set_simd_level(active);
  o.report["cpu_levels"] = levels;
  if (!summary.empty()) {
    say(o.out, "cpu, per SIMD level:\n");
    for (const std::string& line : summary) say(o.out, "  {}\n", line);
    say(o.out, "\n");
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
          "the best of 3)\n",
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
