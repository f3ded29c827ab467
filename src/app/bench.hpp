// `trainscope bench`: GEMM GFLOP/s of the training kernels per backend, set against the measured FMA peak and, on the
// CPU, against OpenBLAS measured in the same run. The pieces shared by cmd_bench.cpp (options, table, report) and
// bench_backends.cpp (the measurements).
#pragma once
#include <string>
#include <vector>

#include "app/bench_timing.hpp"
#include "core/config.hpp"
#include "core/memory_budget.hpp"

namespace app {

// One GEMM to measure: a form of training at a shape. Forms (row-major, as the training kernels hold them):
//   forward          C (M,N) = A (M,K) · B (N,K)ᵀ   matmul_forward:         M = batch, N = outputs, K = inputs
//   backward_data    C (M,N) = A (M,K) · B (K,N)    matmul_backward_data:   M = batch, N = inputs,  K = outputs
//   backward_weight  C (M,N) = A (K,M)ᵀ · B (K,N)   matmul_backward_weight: M = outputs, N = inputs, K = batch
struct GemmCase {
  std::string label;  // "layer 1" (a layer of the chosen model) or "square 1024"
  std::string form;   // "forward", "backward_data", "backward_weight"
  long B = 0, C = 0, OC = 0;  // the layer's batch, inputs, outputs
  long M() const;
  long N() const;
  long K() const;
  double flops() const { return 2.0 * static_cast<double>(B) * static_cast<double>(C) * static_cast<double>(OC); }
};

// The GEMMs of one training step of `cfg`'s model (from core::build_step_plan: forward and backward weight per layer,
// backward data for every layer but the first), then the three forms at each square size.
std::vector<GemmCase> bench_cases(const core::TrainConfig& cfg, int features, int classes,
                                  const std::vector<long>& squares);

struct OpenBlasFigure {
  std::string requested;  // OPENBLAS_CORETYPE given ("" = unset: OpenBLAS's own choice)
  std::string core;       // what openblas_get_corename() reported
  double ms = 0, gflops = 0;
};

struct BenchRow {
  std::string backend;  // "cpu" | "gpu"
  std::string device;   // CPU model or Vulkan device name
  std::string kernel;   // "AVX-512 6x32" (CPU micro-kernel) or the GPU tiling
  int threads = 0;      // CPU threads (0 for the GPU)
  GemmCase gemm;
  double ms = 0, gflops = 0;
  double peak_gflops = 0;  // the measured FMA peak it is set against (0: none measured)
  // GPU backward_weight at the model's shapes: a row of split-K (gpu::choose_split_k) with split_k slices, timed
  // with its reduce, and the unsplit row's ms of the same configuration in the same run (0: not a split-K row).
  uint32_t split_k = 1;
  double unsplit_ms = 0;
  std::vector<OpenBlasFigure> openblas;
};

// The host memory the bench will hold at its peak for `cases`: the largest case of each side that runs (trainscope's
// CPU GEMM, OpenBLAS in its child process, the GPU when its memory is host memory), summed, since the CPU GEMM's
// packed copy stays while the other sides run. Checked with core::check_host_memory before measuring.
core::MemoryNeed bench_memory_need(const std::vector<GemmCase>& cases, bool cpu, bool openblas, bool gpu_on_host);

// Progress shown on stderr while measuring: "bench: cpu, 2 threads: 12/42 square 1024 backward_weight".
void bench_progress(const std::string& what, size_t done, size_t total);

// The CPU rows: each case timed with the kernel table's fp32 CPU twin of its GEMM (src/cpu/ops/matmul_*.cpp; forward
// with its bias) on a pool of `threads` threads.
std::vector<BenchRow> bench_cpu(const std::vector<GemmCase>& cases, int threads, int repeats, double min_seconds,
                                BenchClock clock);

// The OpenBLAS figures of `cases` on `threads` threads with OPENBLAS_CORETYPE=core (empty: unset), measured by the
// trainscope-openblas-gemm program beside this executable with OPENBLAS_L2_SIZE=l2_kb (0: unset). Returns the
// figures in case order, or throws core::Error(Io) saying why (program missing, it failed).
std::vector<OpenBlasFigure> bench_openblas(const std::vector<GemmCase>& cases, int threads, const std::string& core,
                                           int l2_kb, int repeats, double min_seconds, BenchClock clock);

// The GPU rows on Vulkan device `device` (-1: the best), timed with timestamp queries around each dispatch, each set
// against the device's fp32 FMA peak measured first (measure_gpu_fma_peak). Every case runs the device's default
// GEMM configuration (gpu::choose_gemm_config); the model's shapes and squares up to 512 also run the other path
// (tiled on a software device, texel where a GPU has the formats), each row naming its variant. The backward_weight
// GEMMs at the model's shapes also run split-K on the default configuration, right after its unsplit row: with the
// slices gpu::choose_split_k picks for this device, or where it picks none, kBenchSplitK slices (marked "forced"; or
// TRAINSCOPE_SPLIT_K's), their time including the reduce, and the ratio to the unsplit row.
// Throws core::Error(Vulkan) when there is no device.
std::vector<BenchRow> bench_gpu(const std::vector<GemmCase>& cases, int device, int repeats);
constexpr uint32_t kBenchSplitK = 4;

// Uniform values in [-1, 1) from a fixed seed: the GEMMs' inputs.
std::vector<float> random_floats(size_t n, uint64_t seed);

}  // namespace app
