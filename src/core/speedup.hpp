// The GPU/CPU speedup, only where it is honest: GPU samples/s over CPU samples/s measured over windows in which both
// backends ran the same model, batch size, precision and optimizer. Otherwise no number, and the reason why. One rule
// for the dashboard's race header (recent rates, while both train) and `train`'s summary and report (whole epochs).
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"

namespace core {

struct Speedup {
  double value = 0;    // GPU samples/s / CPU samples/s; 0 when there is no honest figure
  double gpu_rate = 0;  // the samples/s compared (0 with no figure)
  double cpu_rate = 0;
  std::string reason;  // why there is no figure ("settings differ: batch GPU 128, CPU 32", "CPU finished"); "" else
  bool ok() const { return value > 0; }
};

// What makes one training step of `a` different work from one of `b`: "" when they train the same model (dataset,
// layers, activation) with the same batch size, precision and optimizer, else the differences in words, e.g.
// "batch GPU 128, CPU 32; precision GPU fp16, CPU fp32" (a_name, b_name name the two sides).
std::string settings_difference(const TrainConfig& a, const TrainConfig& b, const std::string& a_name = "GPU",
                                const std::string& b_name = "CPU");

// The dashboard's live figure, from BackendRun::recent_samples_per_s: both backends are training now (not finished,
// stopped, paused or applying a change), run the same settings, and each has measured a rate since its last change
// (the worker restarts its rate window at every rebuild, so a rate never spans two settings).
Speedup live_speedup(const BackendRun& gpu, const BackendRun& cpu);

// `train`'s figure, from BackendRun::samples_per_s() over the finished epochs: both finished at least one epoch with
// the same settings, and neither stopped with an error.
Speedup run_speedup(const BackendRun& gpu, const BackendRun& cpu);

// run_speedup of the runs named "gpu" and "cpu" in `runs`; a reason when either is missing.
Speedup run_speedup(const std::vector<BackendRun>& runs);

}  // namespace core
