// run::Sweep: the batch-size sweep (trainscope sweep, the dashboard's Sweep tab). For every batch size and backend
// (and, for the CPU, every thread count) a fresh trainer from the same initial weights trains `warmup_steps` steps,
// then `timed_steps` steps timed by the wall clock from the first queued step to the last one read back; the point's
// figures are throughput over those steps, so the GPU's queueing and read-back count as they do in training.
// The crossover is the smallest batch size at which the GPU trains more samples per second than the CPU.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the full header only where JSON is built or read (build time)

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "run/session.hpp"

namespace run {

// 1, 2, 4, ..., 4096: the default batch sizes.
std::vector<int> default_sweep_batches();

struct SweepOptions {
  core::TrainConfig config;       // the model, data, precision, toggles; batch and threads are swept
  std::vector<int> batches;       // ascending; sizes above the training set or the memory cap are skipped (reason)
  std::vector<int> cpu_threads;   // one CPU series per entry (0: all hardware threads); empty: {config.threads}
  int warmup_steps = 2;           // untimed steps of each point (pipelines, caches, the pool's threads warm up)
  int timed_steps = 5;            // timed steps of each point
};

struct SweepPoint {
  std::string backend;     // "gpu" | "cpu"
  std::string series;      // "gpu", "cpu" or "cpu 2 threads" (with --threads)
  int batch = 0;
  int threads = 0;         // CPU: the thread count asked for (0: all); GPU: 0
  std::string device;      // Trainer::device_name()
  int steps = 0;           // timed steps (0: skipped)
  double ms_per_step = 0;  // wall clock, timed steps only
  double samples_per_s = 0;
  double gflops = 0;       // the plan's analytic FLOPs per step (core::StepPlan) / ms_per_step
  double gbps = 0;         // the plan's compulsory bytes per step / ms_per_step
  std::string skipped;     // why this point was not measured ("batch 8192 > 6000 training samples"); empty if measured
  bool failed = false;     // skipped because of an error (no Vulkan device, out of memory), not a size it cannot take
  bool measured() const { return skipped.empty() && steps > 0; }
};

struct SweepResult {
  std::vector<SweepPoint> points;  // in measuring order: per batch size, the GPU then the CPU series
  // The smallest batch at which the GPU's samples/s exceed the reference CPU series' (the first of cpu_threads).
  std::optional<int> crossover;
  std::string crossover_text;  // "batch 64", or "none on this machine: ..." with the reason
  bool software_gpu = false;   // the GPU is a software Vulkan device (lavapipe): it runs on these same CPU cores
  bool stopped = false;        // stop was requested before the end

  // GPU samples/s / reference CPU samples/s at `batch`, 0 where either was not measured.
  double speedup(int batch) const;
  const SweepPoint* find(const std::string& series, int batch) const;
  std::vector<std::string> series() const;  // in order of first appearance
};

// Called after every point (measured or skipped), from the sweeping thread; done of total points.
using SweepProgress = std::function<void(const SweepPoint& point, size_t done, size_t total)>;

// Refuses a sweep of which not even the smallest point fits in the host memory beside the initial weights it keeps
// (core::check_host_memory; a model over core::kMaxTrainingBytes at the smallest batch too). run_sweep calls it;
// `trainscope sweep` calls it first, before printing anything. Throws core::Error(InvalidArgument).
void check_sweep_memory(const SweepOptions& o, const core::DataSplit& data, const std::vector<BackendSpec>& backends);

// Runs the sweep on `backends` (run::backends_from_config), one point at a time (never two trainers at once, so that
// no point shares the cores). A backend whose trainer cannot be made is recorded as skipped at every size, with the
// error. `stop` (may be null), when set, ends the sweep after the current point (SweepResult::stopped).
SweepResult run_sweep(const SweepOptions& options, const core::DataSplit& data, const std::vector<BackendSpec>& backends,
                      const SweepProgress& progress = {}, const std::atomic<bool>* stop = nullptr);

// The crossover of `points` (see SweepResult), filled into result.crossover / crossover_text / software_gpu.
void find_crossover(SweepResult& result);

// {"config": ..., "points": [{"series", "backend", "batch", "threads", "device", "steps", "ms_per_step",
//  "samples_per_s", "gflops", "gbps", "skipped"}], "speedup": [{"batch", "speedup"}], "crossover": N or null,
//  "crossover_text": "...", "software_gpu": bool, "stopped": bool}
nlohmann::json sweep_json(const SweepOptions& options, const SweepResult& result);
// One row per point: series,backend,batch,threads,steps,ms_per_step,samples_per_s,gflops,gbps,speedup,skipped.
std::string sweep_csv(const SweepResult& result);

}  // namespace run
