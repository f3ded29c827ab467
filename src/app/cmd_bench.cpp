// `trainscope bench`: the GEMMs of training per backend, in GFLOP/s, each against the measured FMA peak (cpu/
// fma_probe) and, on the CPU, against OpenBLAS's cblas_sgemm on the same threads, for its default core type and its
// best one for this CPU, all measured in this one run. Shapes: the model's (as `train` would build it) and squares.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "app/bench.hpp"
#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/print.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/measure.hpp"
#include "core/peaks.hpp"
#include "core/report.hpp"
#include "cpu/fma_probe.hpp"
#include "cpu/gemm.hpp"
#include "cpu/simd.hpp"
#include "cpu/trainer.hpp"
#include "run/peaks.hpp"
#include "run/session.hpp"

namespace app {
namespace {

[[noreturn]] void bad_input(const std::string& message) {
  throw core::Error(core::ErrorKind::InvalidArgument, message);
}

// "1,2" -> {1, 2}; "all" -> hardware threads. Each value lo..hi.
std::vector<long> parse_list(const std::string& option, const std::string& text, long lo, long hi) {
  std::vector<long> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    long v = 0;
    if (part == "all") {
      v = static_cast<long>(std::max(1u, std::thread::hardware_concurrency()));
    } else {
      char* end = nullptr;
      v = std::strtol(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || v < lo || v > hi)
        bad_input(fmt::format("{} {}: '{}' is not allowed (comma-separated integers {}..{})", option, text, part, lo,
                              hi));
    }
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    start = comma + 1;
  }
  return values;
}

// The best OpenBLAS 0.3.21 core type for this CPU's SIMD level (OPENBLAS_CORETYPE names; "" where none is better
// than OpenBLAS's own choice).
std::string best_openblas_core() {
  switch (cpu::cpu_simd_level()) {
    case cpu::SimdLevel::AVX512: return "SkylakeX";
    case cpu::SimdLevel::AVX2: return "Haswell";
    case cpu::SimdLevel::NEON:  // OpenBLAS's own choice on ARM
    case cpu::SimdLevel::Portable: break;
  }
  return "";
}

// "cpu,gpu" -> {"cpu", "gpu"} (empty parts dropped).
std::vector<std::string> parse_names(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) names.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

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
    std::string line = fmt::format("{:<12} {:<16} {:>5} {:>5} {:>5} {:>9.3f} {:>9.1f} {:>7}", r.gemm.label,
                                   r.gemm.form, r.gemm.M(), r.gemm.N(), r.gemm.K(), r.ms, r.gflops,
                                   r.peak_gflops > 0 ? fmt::format("{:.1f}", 100.0 * r.gflops / r.peak_gflops) : "-");
    for (const auto& f : r.openblas)
      line += fmt::format("  {:>17.1f} {:>5.2f}x", f.gflops, f.gflops > 0 ? r.gflops / f.gflops : 0.0);
    if (kernel_column) line += "  " + r.kernel;
    say(out, "{}\n", line);
  }
  say(out, "\n");
}

nlohmann::json row_json(const BenchRow& r) {
  nlohmann::json j = {{"backend", r.backend}, {"device", r.device}, {"kernel", r.kernel}, {"threads", r.threads},
                      {"shape", r.gemm.label}, {"form", r.gemm.form}, {"batch", r.gemm.B}, {"inputs", r.gemm.C},
                      {"outputs", r.gemm.OC}, {"M", r.gemm.M()}, {"N", r.gemm.N()}, {"K", r.gemm.K()},
                      {"flops", r.gemm.flops()}, {"ms", r.ms}, {"gflops", r.gflops}, {"split_k", r.split_k}};
  // A split-K row: the unsplit row's time of the same configuration in the same run, and unsplit / split.
  j["split_k_speedup"] = r.unsplit_ms > 0 ? nlohmann::json(r.unsplit_ms / r.ms) : nlohmann::json(nullptr);
  j["peak_gflops"] = r.peak_gflops > 0 ? nlohmann::json(r.peak_gflops) : nlohmann::json(nullptr);
  j["percent_of_peak"] = r.peak_gflops > 0 ? nlohmann::json(100.0 * r.gflops / r.peak_gflops) : nlohmann::json(nullptr);
  nlohmann::json ob = nlohmann::json::array();
  for (const auto& f : r.openblas)
    ob.push_back({{"coretype_requested", f.requested.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.requested)},
                  {"core", f.core}, {"ms", f.ms}, {"gflops", f.gflops},
                  {"ratio", f.gflops > 0 ? r.gflops / f.gflops : 0.0}});
  j["openblas"] = ob;
  return j;
}

}  // namespace

// The bench's own numeric options, checked like every other (core/options).
constexpr core::IntRule kRepeats{"--repeats", "the number of timed calls", 1, 1000};
constexpr core::RealRule kMinTime{"--min-time", "the minimum timing in seconds", 0, 60};
constexpr core::IntRule kOpenblasL2{"--openblas-l2", "OpenBLAS's L2 size in KiB", 0, 1 << 20, "0: unset"};

CLI::App* add_bench_command(CLI::App& parent, BenchOptions& o) {
  CLI::App* b = parent.add_subcommand(
      "bench", "Measure the GEMMs of training (forward A·Bᵀ, backward data A·B, backward weight Aᵀ·B) per backend in "
               "GFLOP/s, against the measured FMA peak and, on the CPU, against OpenBLAS in the same run");
  b->add_option("--preset", o.preset, "A named model: seed-mlp = MLP 1024-2048-2048-10, GELU, AdamW, batch 512")
      ->check(CLI::IsMember({"none", "seed-mlp"}))->group("Model");
  b->add_option("--dataset", o.dataset, "Dataset whose input and class counts the model has (fashion-mnist: 784, 10)")
      ->check(CLI::IsMember({"fashion-mnist", "spiral"}))->group("Model");
  b->add_option("--spiral-classes", o.spiral_classes, "Spiral: number of classes, 2..16")
      ->check(checked(core::rules::spiral_classes))->group("Model");
  b->add_option("--hidden", o.hidden, "Hidden layer sizes, comma-separated, each 1..65536")
      ->type_name("N[,N...]")->group("Model");
  b->add_option("--batch", o.batch, "Batch size, 1..65536")->check(checked(core::rules::batch))->group("Model");
  b->add_option("--sizes", o.sizes, "Square GEMM sizes (M = N = K), comma-separated, 1..8192; 0 alone: none")
      ->type_name("N[,N...]")->group("Measurement");
  b->add_option("--backend", o.backend, "Backends to measure, comma-separated: cpu, gpu or cpu,gpu")
      ->type_name("NAME[,NAME]")->group("Measurement");
  b->add_option("--threads", o.threads, "CPU thread counts, comma-separated ('all': the hardware threads)")
      ->type_name("N[,N...]")->group("Measurement");
  b->add_option("--repeats", o.repeats, "Timed calls per GEMM at least (the median is shown), 1..1000")
      ->check(checked(kRepeats))->group("Measurement");
  b->add_option("--min-time", o.min_seconds, "CPU: keep timing a GEMM for at least this many seconds, 0..60")
      ->type_name("S")->check(checked(kMinTime))->group("Measurement");
  b->add_option("--clock", o.clock,
                "How a CPU call is timed: wall (the wall clock) or cpu (the calling thread's CPU time: on a shared, busy "
                "machine it leaves out the moments another program had the core; only with --threads 1)")
      ->check(CLI::IsMember({"wall", "cpu"}))->group("Measurement");
  b->add_option("--device", o.device, "Vulkan device index from `trainscope devices` (-1: the best one)")
      ->type_name("N")->check(checked(core::rules::device))->group("Measurement");
  b->add_option("--openblas", o.openblas,
                "OpenBLAS core types to compare with, comma-separated OPENBLAS_CORETYPE names; 'default' = "
                "OpenBLAS's own choice, 'best' = the best for this CPU (SkylakeX with AVX-512, Haswell with AVX2); "
                "'none': no OpenBLAS")
      ->type_name("CORE[,CORE]")->group("Measurement");
  b->add_option("--openblas-l2", o.openblas_l2_kb,
                "OPENBLAS_L2_SIZE (KiB) given to OpenBLAS, which cannot always read the L2 size in a VM (0: unset, "
                "OpenBLAS detects it)")
      ->check(checked(kOpenblasL2))->default_str("the environment's OPENBLAS_L2_SIZE, else 0")->type_name("KIB")->group("Measurement");
  b->add_option("--report", o.report, "Write every row as JSON to FILE")
      ->check(non_empty("--report", "a file name, or - for standard output"))
      ->type_name("FILE.json")
      ->default_str("none")
      ->group("Output");
  b->footer("OpenBLAS is the reference only: trainscope-openblas-gemm (built beside trainscope when libopenblas-dev "
            "is installed) runs it in a child process per core type, with OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE and "
            "OPENBLAS_L2_SIZE set by the bench and every other OPENBLAS_*/OMP_* variable removed. The CPU GEMM's SIMD "
            "path can be lowered with TRAINSCOPE_CPU_SIMD=avx2|portable. GPU: backward_weight at the model's shapes "
            "also runs split-K (K cut into slices summed by a second pass; the slices the device would use, else "
            "4, marked forced), its time including the reduce and its speed as a ratio to the unsplit row above it. "
            "GPU GEMM experiments: TRAINSCOPE_GEMM_PATH=tiled|texel, "
            "TRAINSCOPE_GEMM_TILES=tile_m,tile_n,tile_k,thread_m,thread_n, TRAINSCOPE_SPLIT_K=N (1: never split; "
            "N: N slices) also apply to train and the dashboard.");
  return b;
}

int run_bench(BenchOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  core::TrainConfig cfg;
  int features = 784, classes = 10;
  if (o.dataset == "spiral") {
    features = 2;
    classes = o.spiral_classes;
    if (classes < 2 || classes > 16) bad_input(fmt::format("--spiral-classes {}: must be 2..16", classes));
  }
  cfg.hidden = core::parse_hidden(o.hidden);
  cfg.batch = o.batch;
  if (o.preset == "seed-mlp") {
    features = 1024;
    classes = 10;
    cfg.hidden = {2048, 2048};
    cfg.batch = 512;
    cfg.activation = core::Activation::GELU;
  }
  if (cfg.batch < 1 || cfg.batch > 65536) bad_input(fmt::format("--batch {}: must be 1..65536", cfg.batch));
  if (o.repeats < 1 || o.repeats > 1000) bad_input(fmt::format("--repeats {}: must be 1..1000", o.repeats));
  if (!(o.min_seconds >= 0) || o.min_seconds > 60) bad_input(fmt::format("--min-time {}: must be 0..60", o.min_seconds));
  if (o.openblas_l2_kb < -1 || o.openblas_l2_kb > 1 << 20)
    bad_input(fmt::format("--openblas-l2 {}: must be 0..1048576 KiB", o.openblas_l2_kb));
  std::vector<long> squares = o.sizes == "0" ? std::vector<long>{} : parse_list("--sizes", o.sizes, 1, 8192);
  const std::vector<long> threads = parse_list("--threads", o.threads, 1, 1024);
  const BenchClock clock = o.clock == "cpu" ? BenchClock::ThreadCpu : BenchClock::Wall;
  if (clock == BenchClock::ThreadCpu && (threads.size() != 1 || threads[0] != 1))
    bad_input(fmt::format("--clock cpu: only with --threads 1 (on several threads CPU time is not the time a GEMM "
                          "takes); got --threads {}",
                          o.threads));
  bool use_cpu = false, use_gpu = false;
  for (const auto& name : parse_backends(o.backend, "cpu, gpu, or cpu,gpu")) (name == "cpu" ? use_cpu : use_gpu) = true;
  core::TrainConfig gpu_cfg;  // the GPU to measure, for its device index and whether its memory is host memory
  gpu_cfg.backends = {"gpu"};
  gpu_cfg.device = o.device;
  if (use_gpu && o.device >= 0) check_device_index(o.device);  // exit 2, as train's --device
  std::vector<std::string> cores;  // OPENBLAS_CORETYPE per comparison column ("" = OpenBLAS's default)
  if (o.openblas != "none")
    for (const auto& c : parse_names(o.openblas)) {
      const std::string core = c == "default" ? "" : c == "best" ? best_openblas_core() : c;
      if (c == "best" && core.empty()) continue;
      if (std::find(cores.begin(), cores.end(), core) != cores.end()) continue;
      cores.push_back(core);
    }
  if (!o.report.empty()) core::check_output_path(o.report, "--report");  // before minutes of measuring
  const std::vector<GemmCase> cases = bench_cases(cfg, features, classes, squares);
  core::check_host_memory(
      bench_memory_need(cases, use_cpu, !cores.empty(), use_gpu && run::gpu_memory_on_host(gpu_cfg)),
      "--hidden/--batch/--sizes: this bench",
      "measure smaller shapes (--hidden, --batch, --sizes), or fewer backends (--backend, "
      "--openblas none)");

  // The tables go to stdout, or to stderr when the JSON report does (--report -).
  std::FILE* out = o.report == "-" ? stderr : stdout;
  say(
      out, "model: MLP {}{} ({}), batch {}; {} GEMMs per backend and thread count\n", features,
      [&] {
        std::string s;
        for (int h : cfg.hidden) s += fmt::format("-{}", h);
        return s + fmt::format("-{}", classes);
      }(),
      o.preset == "seed-mlp" ? "preset seed-mlp" : o.dataset, cfg.batch, cases.size());
  const double load_before = core::load_average();
  const unsigned hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  if (load_before >= 0)
    say(out, "machine: {} hardware threads, load average {:.2f} before the bench{}\n", hardware_threads, load_before,
        load_before > 0.5 ? " (other work competes for the cores: figures are lower and noisier than on an idle "
                            "machine)"
                          : "");
  nlohmann::json report = {{"model", {{"features", features}, {"hidden", cfg.hidden}, {"classes", classes},
                                      {"batch", cfg.batch}, {"preset", o.preset}}},
                           {"squares", squares}, {"repeats", o.repeats}, {"min_seconds", o.min_seconds},
                           {"clock", o.clock}};
  nlohmann::json all_rows = nlohmann::json::array();
  int failures = 0;

  if (use_cpu) {
    // The FMA peak per thread count: at the width the GEMM runs (the active SIMD level) and at the widest. Taken from
    // the peaks cache (`trainscope peaks`: 1 thread and all) where it has the figure, else measured now.
    const run::PeaksLookup lookup =
        run::lookup_peaks("cpu", -1, run::PeaksPolicy::CachedOnly, core::default_peaks_path());
    if (!lookup.warning.empty()) std::cerr << "trainscope: warning: " << lookup.warning << "\n";
    const std::optional<core::DevicePeaks> cached =
        lookup.cached ? std::optional<core::DevicePeaks>(lookup.peaks) : std::nullopt;
    std::map<long, double> peak_of_threads;
    nlohmann::json peaks = nlohmann::json::array();
    for (long t : threads)
      for (cpu::SimdLevel level : {cpu::SimdLevel::AVX512, cpu::SimdLevel::AVX2, cpu::SimdLevel::NEON}) {
        if (!cpu::simd_level_available(level)) continue;
        const std::string id = fmt::format("fma_{}_{}",
                                           level == cpu::SimdLevel::AVX512 ? "avx512"
                                           : level == cpu::SimdLevel::NEON ? "neon"
                                                                           : "avx2",
                                           t == 1 ? "1t" : "nt");
        const core::PeakFigure* f =
            cached && (t == 1 || t == static_cast<long>(hardware_threads)) ? cached->find(id) : nullptr;
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
        say(out, "cpu FMA peak, {}, {}: {:.1f} GFLOP/s (median of {}{})\n", cpu::to_string(level),
            threads_text(static_cast<int>(t)), p.gflops, p.samples.size(),
            f ? ", from the peaks cache, measured " + cached->measured_at : "");
        peaks.push_back({{"simd", cpu::to_string(level)}, {"threads", t}, {"gflops", p.gflops},
                         {"samples", p.samples}, {"cached", f != nullptr}});
      }
    report["cpu_fma_peaks"] = peaks;
    const char* l2_env = std::getenv("OPENBLAS_L2_SIZE");
    const int l2_kb = o.openblas_l2_kb >= 0 ? o.openblas_l2_kb : (l2_env ? std::atoi(l2_env) : 0);
    report["openblas_l2_kb"] = l2_kb;
    say(out, "cpu GEMM micro-kernel: {}; each call timed with {}\n", cpu::gemm_kernel_name(),
        clock == BenchClock::Wall ? "the wall clock" : "the calling thread's CPU time");
    std::string blas_note = cores.empty() ? "OpenBLAS: not compared (--openblas none)" : "OpenBLAS columns:";
    for (const auto& c : cores)
      blas_note += fmt::format(" [{}]", c.empty() ? "OPENBLAS_CORETYPE unset (its default)" : "OPENBLAS_CORETYPE=" + c);
    if (!cores.empty())
      blas_note += fmt::format(", OPENBLAS_L2_SIZE={}", l2_kb > 0 ? std::to_string(l2_kb) : std::string("unset"));
    say(out, "{}\n\n", blas_note);
    // Case by case, trainscope and then each OpenBLAS core type, so that a change of the machine's load during the
    // run affects both sides of a ratio alike.
    for (long t : threads) {
      const std::string what = fmt::format("cpu, {}", threads_text(static_cast<int>(t)));
      std::vector<BenchRow> rows;
      bool reference_ok = !cores.empty();
      for (size_t i = 0; i < cases.size(); ++i) {
        bench_progress(what, i, cases.size());
        BenchRow row = bench_cpu({cases[i]}, static_cast<int>(t), o.repeats, o.min_seconds, clock).front();
        row.peak_gflops = peak_of_threads.count(t) ? peak_of_threads[t] : 0.0;
        for (size_t c = 0; reference_ok && c < cores.size(); ++c) {
          try {
            row.openblas.push_back(
                bench_openblas({cases[i]}, static_cast<int>(t), cores[c], l2_kb, o.repeats, o.min_seconds, clock)
                    .front());
          } catch (const core::Error& e) {
            std::cerr << "\ntrainscope: warning: OpenBLAS reference: " << e.what() << "\n";
            ++failures;
            reference_ok = false;
          }
        }
        rows.push_back(std::move(row));
      }
      bench_progress(what, cases.size(), cases.size());
      std::vector<std::string> labels;
      if (!reference_ok)  // a failed reference: no column is better than a partial one
        for (auto& r : rows) r.openblas.clear();
      else
        for (const auto& f : rows.front().openblas)
          labels.push_back(f.core + (f.requested.empty() ? " (default)" : ""));
      say(out, "cpu: {}\n", rows.front().device);
      print_table(out, rows, labels);
      for (const auto& r : rows) all_rows.push_back(row_json(r));
    }
  }
  if (use_gpu) {
    try {
      // GPU timings on a software device are slow: fewer timed calls (still the median of at least 3).
      const std::vector<BenchRow> rows = bench_gpu(cases, o.device, std::min(o.repeats, 3));
      if (!rows.empty()) {
        say(out, "gpu: {}\n", rows[0].device);
        say(out,
            "gpu FMA peak, fp32: {:.1f} GFLOP/s (the peak_fma probe of trainscope peaks: independent vec4 fma chains, "
            "median of 3)\n",
            rows[0].peak_gflops);
        report["gpu_fma_peak_gflops"] = rows[0].peak_gflops;
      }
      print_table(out, rows, {}, true);
      for (const auto& r : rows) all_rows.push_back(row_json(r));
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: gpu: " << e.what() << "\n";
      ++failures;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  say(out, "bench took {:.0f} s\n", seconds);
  report["rows"] = all_rows;
  report["seconds"] = seconds;
  report["hardware_threads"] = hardware_threads;
  report["load_average_before"] = load_before;
  report["load_average_after"] = core::load_average();
  if (!o.report.empty()) {
    try {
      core::write_json_atomically(o.report, report);
      if (o.report != "-") say(out, "report: {}\n", o.report);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      return 1;
    }
  }
  return failures ? 1 : 0;
}

}  // namespace app
