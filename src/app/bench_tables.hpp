// The tables of `trainscope bench` (cmd_bench.cpp): the CPU's FMA peaks and its GEMM rows against OpenBLAS, the
// GPU's rows, each printed as a table and added to the JSON report.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/bench.hpp"

namespace app {

// One bench run's settings, checked (cmd_bench.cpp, from the command line).
struct BenchSetup {
  core::TrainConfig cfg;  // the model whose GEMMs are measured: hidden sizes, batch, activation
  int features = 784, classes = 10;
  std::string model_name;     // "fashion-mnist", "spiral" or "preset seed-mlp"
  std::vector<long> squares;  // square sizes (M = N = K)
  std::vector<long> threads;  // CPU thread counts
  BenchClock clock = BenchClock::Wall;
  bool use_cpu = false, use_gpu = false;
  // The OpenBLAS comparison columns as asked (--openblas): "default" (OpenBLAS's own choice), "best" (the best core
  // type for the SIMD level measured: SkylakeX for AVX-512, Haswell for AVX2) or OPENBLAS_CORETYPE names.
  std::vector<std::string> openblas;
  int l2_kb = 0;                   // OPENBLAS_L2_SIZE given to OpenBLAS (0: unset)
  int repeats = 5, device = -1;
  double min_seconds = 0.2;
  std::vector<GemmCase> cases;  // bench_cases of the model and the squares
};

// What a run writes: its tables to `out`, every row to `rows`, its other figures to `report`; `failures` counts a
// backend or an OpenBLAS reference that failed (the exit code is then 1).
struct BenchOutput {
  std::FILE* out = stdout;
  nlohmann::json report = nlohmann::json::object();
  nlohmann::json rows = nlohmann::json::array();
  int failures = 0;
};

// The CPU's FMA peak per thread count and SIMD level (from the peaks cache where it has it, else measured), then per
// SIMD level (the active one, and AVX2 below AVX-512) and thread count the table of every case, trainscope then each
// OpenBLAS core type case by case (a change of the machine's load affects both sides of a ratio alike), and a summary
// per level: the square GEMMs' ratios to OpenBLAS's best core for that level and their shares of the FMA peak.
void bench_cpu_tables(const BenchSetup& s, BenchOutput& o);
// The GPU's table (bench_gpu); a failure is reported on stderr and counted.
void bench_gpu_table(const BenchSetup& s, BenchOutput& o);

}  // namespace app
