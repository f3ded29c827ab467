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
#include "app/bench_tables.hpp"
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
                "OpenBLAS's own choice, 'best' = the best for the SIMD level measured (SkylakeX for AVX-512, Haswell "
                "for AVX2); 'none': no OpenBLAS")
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
            "path can be lowered with TRAINSCOPE_CPU_SIMD=avx2|portable. The CPU's tables are measured per SIMD "
            "level: the active one and, below AVX-512, AVX2 (what most laptops have), each against OpenBLAS's best core for that "
            "level ('best': SkylakeX, Haswell), then a summary of the square GEMMs per level: their ratio to that core "
            "and their share of the level's FMA peak. GPU: backward_weight at the model's shapes "
            "also runs split-K (K cut into slices summed by a second pass; the slices the device would use, else "
            "4, marked forced), its time including the reduce and its speed as a ratio to the unsplit row above it. "
            "GPU GEMM experiments: TRAINSCOPE_GEMM_PATH=tiled|texel, "
            "TRAINSCOPE_GEMM_TILES=tile_m,tile_n,tile_k,thread_m,thread_n, TRAINSCOPE_SPLIT_K=N (1: never split; "
            "N: N slices) also apply to train and the dashboard.");
  return b;
}

namespace {

// The bench's settings from its options, checked (the options' ranges are checked as they are parsed).
BenchSetup bench_setup(const BenchOptions& o) {
  BenchSetup s;
  s.model_name = o.dataset;
  if (o.dataset == "spiral") {
    s.features = 2;
    s.classes = o.spiral_classes;
  }
  s.cfg.hidden = core::parse_hidden(o.hidden);
  s.cfg.batch = o.batch;
  if (o.preset == "seed-mlp") {
    s.model_name = "preset seed-mlp";
    s.features = 1024;
    s.classes = 10;
    s.cfg.hidden = {2048, 2048};
    s.cfg.batch = 512;
    s.cfg.activation = core::Activation::GELU;
  }
  s.squares = o.sizes == "0" ? std::vector<long>{} : parse_list("--sizes", o.sizes, 1, 8192);
  s.threads = parse_list("--threads", o.threads, 1, 1024);
  s.clock = o.clock == "cpu" ? BenchClock::ThreadCpu : BenchClock::Wall;
  if (s.clock == BenchClock::ThreadCpu && (s.threads.size() != 1 || s.threads[0] != 1))
    bad_input(fmt::format("--clock cpu: only with --threads 1 (on several threads CPU time is not the time a GEMM "
                          "takes); got --threads {}",
                          o.threads));
  for (const auto& name : parse_backends(o.backend, "cpu, gpu, or cpu,gpu"))
    (name == "cpu" ? s.use_cpu : s.use_gpu) = true;
  if (s.use_gpu && o.device >= 0) check_device_index(o.device);  // exit 2, as train's --device
  if (o.openblas != "none")
    for (const auto& c : parse_names(o.openblas))
      if (std::find(s.openblas.begin(), s.openblas.end(), c) == s.openblas.end()) s.openblas.push_back(c);
  const char* l2_env = std::getenv("OPENBLAS_L2_SIZE");
  s.l2_kb = o.openblas_l2_kb >= 0 ? o.openblas_l2_kb : (l2_env ? std::atoi(l2_env) : 0);
  s.repeats = o.repeats;
  s.min_seconds = o.min_seconds;
  s.device = o.device;
  s.cases = bench_cases(s.cfg, s.features, s.classes, s.squares);
  return s;
}

// "model: MLP 784-256-128-10 (fashion-mnist), batch 128; ..." and the machine's load.
void print_bench_header(const BenchSetup& s, BenchOutput& o) {
  std::string dims = fmt::format("{}", s.features);
  for (int h : s.cfg.hidden) dims += fmt::format("-{}", h);
  say(o.out, "model: MLP {}-{} ({}), batch {}; {} GEMMs per backend and thread count\n", dims, s.classes, s.model_name,
      s.cfg.batch, s.cases.size());
  const double load = core::load_average();
  if (load >= 0)
    say(o.out, "machine: {} hardware threads, load average {:.2f} before the bench{}\n",
        std::max(1u, std::thread::hardware_concurrency()), load,
        load > 0.5 ? " (other work competes for the cores: figures are lower and noisier than on an idle machine)"
                   : "");
  o.report["load_average_before"] = load;
}

}  // namespace

int run_bench(BenchOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const BenchSetup s = bench_setup(o);
  core::TrainConfig gpu_cfg;  // the GPU to measure, for whether its memory is host memory
  gpu_cfg.backends = {"gpu"};
  gpu_cfg.device = o.device;
  if (!o.report.empty()) core::check_output_path(o.report, "--report");  // before minutes of measuring
  core::check_host_memory(
      bench_memory_need(s.cases, s.use_cpu, !s.openblas.empty(), s.use_gpu && run::gpu_memory_on_host(gpu_cfg)),
      "--hidden/--batch/--sizes: this bench",
      "measure smaller shapes (--hidden, --batch, --sizes), or fewer backends (--backend, --openblas none)");

  BenchOutput out;
  out.out = o.report == "-" ? stderr : stdout;  // the tables go to stderr when the JSON report goes to stdout
  out.report = {{"model", {{"features", s.features}, {"hidden", s.cfg.hidden}, {"classes", s.classes},
                           {"batch", s.cfg.batch}, {"preset", o.preset}}},
                {"squares", s.squares}, {"repeats", o.repeats}, {"min_seconds", o.min_seconds}, {"clock", o.clock}};
  print_bench_header(s, out);
  if (s.use_cpu) bench_cpu_tables(s, out);
  if (s.use_gpu) bench_gpu_table(s, out);

  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  say(out.out, "bench took {:.0f} s\n", seconds);
  out.report["rows"] = out.rows;
  out.report["seconds"] = seconds;
  out.report["hardware_threads"] = std::max(1u, std::thread::hardware_concurrency());
  out.report["load_average_after"] = core::load_average();
  if (!o.report.empty()) {
    try {
      core::write_json_atomically(o.report, out.report);
      if (o.report != "-") say(out.out, "report: {}\n", o.report);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      return 1;
    }
  }
  return out.failures ? 1 : 0;
}

}  // namespace app
