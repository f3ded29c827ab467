// The measurements of `trainscope bench` (see bench.hpp): the CPU kernels on a thread pool, OpenBLAS in a child
// process per core type (the GPU rows: bench_gpu.cpp).
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <system_error>

#include "app/bench.hpp"
#include "app/bench_timing.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/step_plan.hpp"
#include "cpu/gemm.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/trainer.hpp"
#include "platform/process.hpp"
#include "platform/system.hpp"

namespace app {
namespace {

size_t sz(long n) { return static_cast<size_t>(n); }

// The directory of this executable (trainscope-openblas-gemm is built beside it).
std::filesystem::path executable_dir() {
  const std::filesystem::path self = platform::executable_path();
  return self.empty() ? std::filesystem::current_path() : self.parent_path();
}

}  // namespace

std::vector<float> random_floats(size_t n, uint64_t seed) {
  core::Pcg32 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

long GemmCase::M() const { return form == "backward_weight" ? OC : B; }
long GemmCase::N() const { return form == "forward" ? OC : C; }
long GemmCase::K() const { return form == "forward" ? C : form == "backward_data" ? OC : B; }

std::vector<GemmCase> bench_cases(const core::TrainConfig& cfg, int features, int classes,
                                  const std::vector<long>& squares) {
  std::vector<int> dims{features};
  dims.insert(dims.end(), cfg.hidden.begin(), cfg.hidden.end());
  dims.push_back(classes);
  const core::StepPlan plan =
      core::build_step_plan(core::ModelShape(dims), cfg.batch, cfg.activation, cfg.optimizer, core::Precision::FP32);
  std::vector<GemmCase> cases;
  for (const auto& e : plan.entries) {
    const char* form = e.op == core::Op::matmul_forward          ? "forward"
                       : e.op == core::Op::matmul_backward_data   ? "backward_data"
                       : e.op == core::Op::matmul_backward_weight ? "backward_weight"
                                                                : nullptr;
    if (form) cases.push_back({fmt::format("layer {}", e.layer + 1), form, e.B, e.C, e.OC});
  }
  for (long s : squares)
    for (const char* form : {"forward", "backward_data", "backward_weight"})
      cases.push_back({fmt::format("square {}", s), form, s, s, s});
  return cases;
}

core::MemoryNeed bench_memory_need(const std::vector<GemmCase>& cases, bool cpu, bool openblas, bool gpu_on_host) {
  // Floats of one case, per side, at their most (each side allocates a case's operands, times it, frees them):
  //   trainscope's CPU GEMM: inp, weight, dout, out, and the packed copy of B (kept by the thread afterwards);
  //   OpenBLAS (a child process): A, B, C and its own packed copy of B;
  //   the GPU on a software device: inp, weight, dout, out, preact, the host copy of the largest one being uploaded,
  //   and split-K's partials (kBenchSplitK x M x N).
  double cpu_floats = 0, blas_floats = 0, gpu_floats = 0;
  for (const GemmCase& g : cases) {
    const double in = double(g.B) * double(g.C), weight = double(g.OC) * double(g.C), dout = double(g.B) * double(g.OC);
    const double out = double(g.M()) * double(g.N()), b = double(g.K()) * double(g.N());
    cpu_floats = std::max(cpu_floats, in + weight + dout + out + b);
    blas_floats = std::max(blas_floats, double(g.M()) * double(g.K()) + 2 * b + out);
    gpu_floats =
        std::max(gpu_floats, in + weight + 2 * dout + out + std::max({in, weight, dout, out}) + kBenchSplitK * out);
  }
  core::MemoryNeed need;
  if (cpu) need.add("the largest CPU GEMM's operands and packed copy", 4 * cpu_floats);
  if (cpu && openblas) need.add("OpenBLAS's (a child process)", 4 * blas_floats);
  if (gpu_on_host) need.add("the largest GPU GEMM's buffers (software Vulkan: host memory)", 4 * gpu_floats);
  return need;
}

void bench_progress(const std::string& what, size_t done, size_t total) {
  if (platform::stderr_is_terminal()) {  // one line, rewritten in place
    std::cerr << fmt::format("\rbench: {}: {}/{}", what, done, total) << (done == total ? "\n" : "          ")
              << std::flush;
  } else if (done == 0 || done == total) {  // a log: where each part starts and ends
    std::cerr << fmt::format("bench: {}: {}/{}\n", what, done, total) << std::flush;
  }
}

std::vector<BenchRow> bench_cpu(const std::vector<GemmCase>& cases, int threads, int repeats, double min_seconds,
                                BenchClock clock) {
  cpu::ThreadPool pool(threads);
  const std::string device = cpu::cpu_description(threads), kernel = cpu::gemm_kernel_name();
  std::vector<BenchRow> rows;
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& g = cases[i];
    const auto x = random_floats(sz(g.B * g.C), 1), w = random_floats(sz(g.OC * g.C), 2);
    const auto d = random_floats(sz(g.B * g.OC), 3), bias = random_floats(sz(g.OC), 4);
    std::vector<float> out(sz(g.M() * g.N()));
    // The kernel table's fp32 CPU twins, as training calls them (forward: the logits layer's form, with its bias).
    using core::Op;
    const Op op = g.form == "forward"         ? Op::matmul_forward
                  : g.form == "backward_data" ? Op::matmul_backward_data
                                              : Op::matmul_backward_weight;
    const core::PlanEntry entry{.op = op, .B = g.B, .C = g.C, .OC = g.OC};
    auto* o = static_cast<void*>(out.data());
    auto in = [](const std::vector<float>& v) { return const_cast<float*>(v.data()); };
    std::vector<void*> bindings;
    if (op == Op::matmul_forward) bindings = {o, nullptr, in(x), in(w), in(bias)};
    else if (op == Op::matmul_backward_data) bindings = {o, in(d), in(w)};
    else bindings = {o, in(d), in(x)};
    // The twin itself, without cpu::run_kernel's checks, so that the smallest products time the GEMM alone.
    const core::KernelArgs args = core::kernel_def(op).args(entry, core::StepArgs{});
    const cpu::Kernel& twin = cpu::kernel(op);
    const cpu::Bindings views(bindings);
    auto call = [&] { twin.tuned(views, args, pool); };
    const TimedCalls t = time_calls(call, repeats, min_seconds, clock);
    BenchRow row;
    row.backend = "cpu";
    row.device = device;
    row.kernel = kernel;
    row.threads = threads;
    row.gemm = g;
    row.ms = t.median_ms;
    row.gflops = g.flops() / (t.median_ms * 1e-3) / 1e9;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<OpenBlasFigure> bench_openblas(const std::vector<GemmCase>& cases, int threads, const std::string& core,
                                           int l2_kb, int repeats, double min_seconds, BenchClock clock) {
  const std::string program =
      (executable_dir() / platform::executable_name("trainscope-openblas-gemm")).string();
  if (!platform::is_executable(program))
    throw core::Error(core::ErrorKind::Io, fmt::format("{} not found: install libopenblas-dev and rebuild "
                                                       "(scripts/setup.sh does both)", program));
  // The child's environment: ours without any OPENBLAS_* or OMP_* variable, then exactly the ones the bench sets.
  std::vector<std::string> env;
  for (const std::string& v : platform::environment()) {
    if (v.rfind("OPENBLAS_", 0) != 0 && v.rfind("GOTO_", 0) != 0 && v.rfind("OMP_", 0) != 0) env.push_back(v);
  }
  env.push_back(fmt::format("OPENBLAS_NUM_THREADS={}", threads));
  if (!core.empty()) env.push_back("OPENBLAS_CORETYPE=" + core);
  if (l2_kb > 0) env.push_back(fmt::format("OPENBLAS_L2_SIZE={}", l2_kb));
  std::vector<std::string> args{program, std::to_string(repeats), fmt::format("{}", min_seconds),
                                clock == BenchClock::ThreadCpu ? "cpu" : "wall"};
  for (const auto& g : cases) args.push_back(fmt::format("{}:{}:{}:{}", g.form, g.M(), g.N(), g.K()));
  std::vector<OpenBlasFigure> figures;
  std::string reported_core;
  int exit_code = -1;
  try {
    exit_code = platform::run_reading_lines(program, args, env, [&](const std::string& line) {
      std::istringstream ls(line);
      std::string key;
      ls >> key;
      if (key == "core") ls >> reported_core;
      if (key != "row") return true;
      std::string form;
      long M = 0, N = 0, K = 0;
      double ms = 0;
      ls >> form >> M >> N >> K >> ms;
      const GemmCase& g = cases[figures.size()];
      figures.push_back({core, reported_core, ms, ms > 0 ? g.flops() / (ms * 1e-3) / 1e9 : 0});
      return figures.size() != cases.size();
    });
  } catch (const std::system_error& e) {
    throw core::Error(core::ErrorKind::Io, fmt::format("could not run {}: {}", program, e.code().message()));
  }
  if (exit_code != 0 || figures.size() != cases.size())
    throw core::Error(core::ErrorKind::Io,
                      fmt::format("{} failed ({} of {} figures)", program, figures.size(), cases.size()));
  return figures;
}

}  // namespace app
