// Per-kernel timing statistics (KernelTable) and the record of one backend's training run (BackendRun): what the
// terminal tables, the report and (later) the dashboard read.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/boundary.hpp"
#include "core/config.hpp"
#include "core/step_plan.hpp"
#include "core/trainer.hpp"

namespace core {

struct ModelView;  // core/model_view.hpp

struct BackendTimeline;  // core/timeline.hpp

// One row of a timing table. Units: ms per call; GFLOP/s = analytic FLOPs / measured time / 1e9;
// GB/s = compulsory bytes (StepPlan) / measured time / 1e9; pct_of_step = share of the summed step time, in percent.
struct KernelRow {
  std::string name;        // kernel name ("matmul_forward"), or a plan entry's label() for per-entry rows
  long calls = 0;          // executions counted (after warm-up)
  double total_ms = 0;
  double mean_ms = 0;      // total_ms / calls
  double pct_of_step = 0;  // 100 * total_ms / summed step_ms
  double gflops = 0;
  double gbps = 0;
};

// Aggregates StepRecords by kernel name (several plan entries share a name, e.g. matmul_forward once per layer)
// and by plan entry (per layer, for detail). The first `warmup` steps are left out: the first step pays for page
// faults, lazy allocation and pipeline warm-up, and would dominate the means of a short run.
class KernelTable {
 public:
  KernelTable() = default;
  explicit KernelTable(int warmup) : warmup_(warmup) {}

  // record.kernel_ms must have one value per plan entry, or none: a step of a device without timestamps on its
  // compute queue, seen but not timed (untimed_steps()). Else core::Error(Internal): a backend bug.
  void add(const StepPlan& plan, const StepRecord& record);
  long untimed_steps() const { return untimed_; }

  std::vector<KernelRow> rows() const;        // per kernel name, in plan order of first appearance
  std::vector<KernelRow> entry_rows() const;  // per plan entry (named by PlanEntry::label()), in plan order
  KernelRow step_row() const;                 // the whole step: calls = steps, GFLOP/s of the whole plan

  long steps() const { return steps_; }        // steps counted (after warm-up)
  long steps_seen() const { return seen_; }    // steps given to add(), warm-up included
  int warmup() const { return warmup_; }
  double mean_step_ms() const { return steps_ > 0 ? step_ms_ / steps_ : 0; }

 private:
  struct Sum {
    std::string name;
    long calls = 0;
    double ms = 0, flops = 0, bytes = 0;
  };
  // What tells plan entries apart (what PlanEntry::label() shows), compared instead of formatted labels: add() runs
  // between training steps, and formatting every label of every step would cost microseconds per step.
  struct EntryKey {
    Op op;
    int layer;
    long B, C, OC;
    size_t N;
    EntryKind kind;
    bool operator==(const EntryKey&) const = default;
  };
  Sum& by_name(const PlanEntry& e);
  Sum& by_entry(const PlanEntry& e);
  KernelRow to_row(const Sum& s) const;

  int warmup_ = 1;
  long seen_ = 0;
  long untimed_ = 0;
  long steps_ = 0;
  double step_ms_ = 0, step_flops_ = 0, step_bytes_ = 0;
  std::vector<std::pair<Op, EntryKind>> name_ops_;  // the Op and kind of each by_name_ sum (one name per pair)
  std::vector<Sum> by_name_;
  std::vector<EntryKey> entry_keys_;  // the key of each by_entry_ sum
  std::vector<Sum> by_entry_;
};

// One finished epoch of one backend.
struct EpochRecord {
  int epoch = 0;               // from 1
  double train_loss = 0;       // mean of this epoch's step losses
  double test_loss = 0;
  double test_accuracy = 0;    // fraction in [0, 1]
  double samples_per_s = 0;    // steps * batch / seconds
  double seconds = 0;          // wall time of the epoch's training steps, evaluation excluded
};

// A labelled moment of a run (a setting changed, a step was skipped), drawn as a vertical line on the plots.
struct Marker {
  long step = 0;        // the first step trained with the change
  double seconds = 0;   // training seconds (pauses excluded) at that moment
  std::string label;    // "batch 128 -> 256"
};

// The measured speed of one (precision, batch size) pair during a run: every configuration a run went through gets a
// row, so the dashboard and the report can compare fp32 / fp16 / bf16 side by side. The first step after each
// (re)build is left out (warm-up), as in KernelTable.
struct PrecisionRow {
  Precision precision = Precision::FP32;
  int batch = 0;
  long steps = 0;
  double step_ms = 0;   // summed measured step times, ms
  double bytes = 0;     // summed compulsory bytes of those steps (StepPlan::total_bytes() per step)
  double flops = 0;     // summed analytic FLOPs
  long skipped = 0;     // steps whose optimizer update was skipped (fp16 overflow)
  KernelTable kernels;  // the per-kernel timings of this configuration (its first step left out, as above)

  double mean_step_ms() const { return steps > 0 ? step_ms / steps : 0; }
  double gbps() const { return step_ms > 0 ? bytes / (step_ms * 1e6) : 0; }    // GB/s (1e9 bytes/s)
  double gflops() const { return step_ms > 0 ? flops / (step_ms * 1e6) : 0; }  // GFLOP/s
  double samples_per_s() const { return step_ms > 0 ? steps * double(batch) / (step_ms * 1e-3) : 0; }
};

// One training step as the CSV export lists it (steps.csv): what it measured and the settings it ran with.
struct StepRow {
  long step = 0;
  float wall_ms = 0;     // from the end of the previous step to the end of this one on the backend's own clock (GPU:
                         // its queue, from the timestamps; CPU: the training thread), gaps between steps included;
                         // the first step after a start or a change: step_ms
  float step_ms = 0;     // StepRecord::step_ms (GPU: first to last timestamp; CPU: wall clock of its kernels)
  float kernel_ms = 0;   // the sum of its kernel times
  float busy_ms = 0;     // kernel_ms less the batch's upload (--input host, a transfer): the time the device computed
  float loss = 0;
  float lr = 0;
  float loss_scale = 0;  // fp16 only, else 0
  int batch = 0;
  Precision precision = Precision::FP32;
  bool skipped = false;  // fp16: the optimizer update was skipped after an overflow
  bool kernels_timed = true;  // false: a device without timestamps; kernel_ms and busy_ms unknown (step_ms and
                              // wall_ms are then the wall clock's, gpu/trainer_step.cpp)
};

// Everything one backend produced in a run; the session keeps it up to date between steps.
struct BackendRun {
  std::string name;            // "gpu" | "cpu"
  std::string device;          // Trainer::device_name(), empty until the trainer exists
  TrainConfig config;          // the settings in force now (changes while running update it)
  std::vector<EpochRecord> epochs;
  std::vector<float> step_losses;   // every training step's mean loss, in step order
  std::vector<float> step_seconds;  // training seconds (pauses excluded) at which each step finished
  // Every training step, in step order (the CSV export): filled only by run::Session::snapshot(with_step_rows), the
  // exports' snapshot; the dashboard's per-frame snapshots leave it empty.
  std::vector<StepRow> step_rows;
  // The last few steps on their tracks (run::SessionOptions::timeline_steps), rebuilt at each read-back; null
  // before the first. Shared, never changed once made: a snapshot copies the pointer.
  std::shared_ptr<const BackendTimeline> timeline;
  std::vector<Marker> markers;
  KernelTable kernels;         // since the last change of batch size, threads or optimizer
  std::string error;           // why the backend stopped early; empty if it did not
  std::string status;          // the last event worth showing ("batch 65536 refused: out of GPU memory ...")
  bool finished = false;       // true once the backend is done, with or without an error

  // Live state, for the dashboard.
  bool paused = false;
  int epoch = 0;               // the epoch being trained, from 1 (0 before the first step)
  int step_in_epoch = 0;
  int steps_per_epoch = 0;
  double elapsed_s = 0;        // training seconds so far, pauses and evaluation excluded
  // Over the last few seconds of training with the settings in force, from at least run::kSteadySeconds of it (timed
  // alone when taking turns); 0: not yet.
  double recent_samples_per_s = 0;
  // Why no samples/s can be measured now, when the reason is known (taking turns with a backend whose steps outlast
  // the longest wait: run::Turns::step_beyond_cap_s), e.g. "25 s steps outlast the turns"; "" otherwise.
  std::string rate_note;
  MemoryUsage memory;          // Trainer::memory_usage() of the trainer in use (bytes); zeros until it exists
  MemoryUsage memory_fp32;     // Trainer::memory_usage_fp32(): the same model in fp32, for comparison
  std::vector<PrecisionRow> precisions;  // measured speed per (precision, batch) the run went through
  // Mixed precision: the fp16 loss scale of the latest step (0 when not fp16) and the optimizer steps skipped because
  // of an fp16 overflow, since the start of the run.
  float loss_scale = 0;
  long skipped_steps = 0;
  // Per core::Precision (index = the enum's value): empty when the device can run it, else the reason it cannot.
  std::vector<std::string> precision_unsupported = std::vector<std::string>(3);

  // What the trainer in use runs, read from the trainer itself (Trainer::plan(), learning_rate()) whenever it is
  // built or changed: what the lesson scripts' "expect" steps and the end-to-end tests check, independently of
  // `config` (the worker's record) and of the dashboard's controls.
  struct Running {
    std::vector<int> dims;   // the model's layer sizes, input to classes
    std::vector<int> hidden;  // the dense hidden layers (--hidden), whatever the model
    std::vector<int> conv;    // a CNN's convolutions (--conv); empty for an MLP
    std::string model;        // ModelShape::describe(): "transformer 2 blocks, embed 64, ..." for a transformer
    int batch = 0;
    Activation activation = Activation::ReLU;
    Optimizer optimizer = Optimizer::AdamW;
    Precision precision = Precision::FP32;
    float lr = 0;
    bool unfused = false;  // the plan's bias_add / act_forward (StepPlan::unfused)
    Execution execution;   // the teaching toggles of the trainer in use (its config's)
    InputPipeline input;   // where its batches come from (its config's)
    // A transformer's attention: its compulsory traffic per step in bytes, fused and naive (core::attention_traffic
    // of the plan in use); 0 for a model without attention.
    double attention_bytes_fused = 0, attention_bytes_naive = 0;
  } running;
  ExecutionCounts counts;  // Trainer::execution_counts() of the trainer in use, at the latest read-back
  // Every step's StepRow busy_ms and wall_ms summed, in seconds: busy_s / wall_s is the run's busy share (GPU busy:
  // the share of the wall time its queue spent in kernels, from the timestamps); the last few steps' share is
  // timeline->busy_share().
  double busy_s = 0, wall_s = 0;
  double busy_share() const { return wall_s > 0 ? std::min(1.0, busy_s / wall_s) : 0; }
  // 2-D data only: the class the current weights predict over the plane (refreshed by the worker a few times a
  // second, Trainer::predict on the backend's own device), with up to kBoundaryPoints training points to draw on it.
  struct Boundary : DecisionBoundary {
    std::vector<float> points;    // (x, y) per point
    std::vector<int32_t> labels;  // their classes
  } boundary;
  // Image data only: a few test images with the classes the current weights predict and a CNN's first filters
  // (core/model_view.hpp), refreshed by the worker about once a second; null before the first. Shared, never changed
  // once made: a snapshot copies the pointer.
  std::shared_ptr<const ModelView> model_view;
  long steps_since_change = 0;  // steps read back from the trainer in use (since the last start or change)
  long generation = 0;          // 1 for the first run, +1 at every Reset: which run this record belongs to

  // Freshness and changes under way, for the dashboard (every figure older than 2 s shows its age).
  double updated_s = 0;        // core::monotonic_seconds() when the figures above were last brought up to date
  bool building = false;       // a change is being applied: a new trainer is being built (figures are the old one's)
  std::string building_what;   // what is being applied, e.g. "batch 128 -> 512"
  std::string build_stage;     // where the build is, e.g. "uploading 210 MiB of data"
  double build_started_s = 0;  // core::monotonic_seconds() when it started
  // Work the worker does between steps, its training clock stopped (run::BackendSpec::background): what it does,
  // e.g. "compiling the bf16 kernels (3/24)"; "" when none is left.
  std::string background;

  // Samples per second over every finished epoch (total samples / total training seconds); 0 if none.
  double samples_per_s() const;
};

// Seconds on a steady clock shared by every thread of the process (BackendRun::updated_s, build_started_s).
double monotonic_seconds();

}  // namespace core
