// The machine-readable report of a training run (trainscope train --report FILE.json).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the full header only where JSON is built or read (build time)

#include "core/config.hpp"
#include "core/metrics.hpp"
#include "core/peaks.hpp"
#include "core/speedup.hpp"

namespace core {

// How many training losses the report keeps per backend.
inline constexpr size_t kReportStepLosses = 50;

// The report as JSON. Schema (later versions may add keys, never rename them):
//   {"config": {every TrainConfig field (precision as "fp32"|"fp16"|"bf16"), plus "effective_weight_decay"},
//    "backends": [{"name": "gpu"|"cpu", "device": "...", "error": "..." (only if it stopped early),
//                  "precision": the precision in force at the end,
//                  "epochs": [{"epoch", "train_loss", "test_loss", "test_accuracy", "samples_per_s", "seconds"}],
//                  "step_losses": [the first 50 training losses],
//                  "kernels": [{"name", "calls", "mean_ms", "gflops", "gbps", "pct_of_step"}],
//                  "precisions": [{"precision", "batch", "steps", "mean_step_ms", "gbps", "gflops",
//                                  "samples_per_s", "skipped_steps"}] (core::PrecisionRow, measured step times),
//                  "skipped_steps": fp16 steps skipped after an overflow, "loss_scale": the last fp16 scale or null,
//                  "markers": [{"step", "seconds", "label"}] (changes and fp16 overflows),
//                  "memory": {"weights", "master_weights", "gradients", "optimizer_state", "activations",
//                             "workspace", "dataset", "total"} (bytes, core::MemoryUsage; zeros if no trainer),
//                  "memory_fp32": the same keys for the same model in fp32 (Trainer::memory_usage_fp32)}],
//    "speedup": gpu samples/s / cpu samples/s over the finished epochs (core::run_speedup: both finished an epoch
//               with the same model, batch size, precision and optimizer), or null,
//    "speedup_reason": why the speedup is null (only then), e.g. "GPU did not finish an epoch",
//    "interrupted": true when SIGINT/SIGTERM stopped the run early (the epochs are those finished before), else false,
//    "roofline": (only when `peaks` is given) one entry per backend of `runs`, in their order (core/roofline.hpp):
//      [{"backend", "device": the peaks' device, "software": a software Vulkan device,
//        "peaks": "cached" | "measured" | "not measured", "note": why not measured, or a cache warning (else ""),
//        "measured_at", "load_average" (when the peaks were measured; null without peaks),
//        "bandwidth_gbps", "bandwidth_from", "compute_gflops", "compute_from": the ceilings (core::roof_ceilings at
//        the backend's thread count; 0 and "" when not measured), "ridge_intensity" (FLOP/byte),
//        "kernels": [{"name", "intensity" (FLOP per compulsory byte), "gflops" (achieved), "gbps" (achieved),
//                     "bound": "memory" | "compute" (the ceiling that binds it), "roof_gflops" (the roof at its
//                     intensity), "pct_of_roof" (100 x achieved / the binding ceiling; 0 without peaks)}]
//                    one per row of "kernels", same order}]}
// Units as in core::KernelRow; accuracy is a fraction in [0, 1].
nlohmann::json report_json(const TrainConfig& config, const std::vector<BackendRun>& runs, bool interrupted = false,
                           const std::vector<BackendPeaks>* peaks = nullptr);

// The "config" object of the report (every TrainConfig field by name), also the trace's otherData.
nlohmann::json config_json(const TrainConfig& config);

// Writes report_json() to `path` with core::write_file_atomically (a temporary file beside it, fsync, rename; a
// device, FIFO or "-" written directly, a symlink kept), so that a reader never sees half a report. Throws
// core::Error(Io) naming the path, the reason and what to do when it cannot be written.
void write_report_json(const std::string& path, const TrainConfig& config, const std::vector<BackendRun>& runs,
                       bool interrupted = false, const std::vector<BackendPeaks>* peaks = nullptr);

// Writes `json` (indented, with a final newline) to `path` atomically as above; throws core::Error(Io).
void write_json_atomically(const std::string& path, const nlohmann::json& json);

}  // namespace core
