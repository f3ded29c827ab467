// The step timeline: where the last few training steps of one backend spent their time, as tracks of events on one
// clock — the GPU queue (every dispatch, from its timestamps), the CPU pool's threads (each kernel's span per thread)
// the host (record, submit, fence wait, read-back, loader wait) and, with --input host, the loader threads and the
// uploads — and, per step, how its wall time splits into kernel time and
// overhead. Built from StepRecords (core/trainer.hpp) by a TimelineRecorder that keeps a bounded window of steps; the
// dashboard's timeline panel draws it and the trace export (core/trace.hpp) writes it for Perfetto.
#pragma once
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/step_plan.hpp"
#include "core/trainer.hpp"

namespace core {

// One span on a track: a kernel (entry >= 0) or a host phase (entry -1).
struct TimelineEvent {
  std::string name;        // the kernel ("matmul_forward") or the host phase ("fence wait")
  std::string label;       // kernels: PlanEntry::label(); host phases: ""
  double start_s = 0;      // seconds on core::monotonic_seconds()'s clock
  double end_s = 0;
  long step = 0;           // the training step it belongs to
  int entry = -1;          // plan entry index, -1 for a host phase
  double flops = 0;        // the whole kernel's analytic FLOPs and compulsory bytes (a thread's span: still the
  double bytes = 0;        // kernel's, not the thread's share)
  double seconds() const { return end_s - start_s; }
};

// Loader: one --input host loader thread (the batches it assembled); Upload: the host's copies of each batch into
// the staging memory (GPU) or the batch input (CPU).
// The name of a loader thread's span (the assembly of one batch, or its chunk of one).
inline constexpr const char* kLoadBatch = "load batch";

enum class TrackKind { GpuQueue, Host, CpuThread, Loader, Upload };

struct TimelineTrack {
  std::string name;        // "GPU queue", "host", "thread 0 (caller)", "thread 1"
  TrackKind kind = TrackKind::GpuQueue;
  std::vector<TimelineEvent> events;  // by start time; events of one track never overlap
};

// One step's wall time split (the breakdown bar): wall = kernels + overhead.
//   wall_s:   from the end of the previous step's last kernel to the end of this step's last kernel on the backend's
//             own track (GPU queue / calling thread); for the first step of the window, and after a break
//             (TimelineRecorder::add_break: the other backend's turn, a pause, a rebuild), its own first to last kernel.
//   kernel_s: the sum of its kernel times (the measured StepRecord::kernel_ms).
//   overhead_s = wall_s - kernel_s: launch, submit, fence waits and read-back, scheduling between kernels.
struct StepBreakdown {
  long step = 0;
  int batch = 0;
  Precision precision = Precision::FP32;
  double wall_s = 0;
  double kernel_s = 0;
  double host_s = 0;       // the summed host phases recorded with the step (GPU)
  // The time the device computed: kernel_s less the batch's upload (--input host), a transfer and not a kernel.
  double busy_s = 0;
  double overhead_s() const { return wall_s > kernel_s ? wall_s - kernel_s : 0; }
  // The share of the step's wall time the device spent in kernels (GPU busy, from the timestamps), in [0, 1].
  double busy_share() const { return wall_s > 0 ? std::min(1.0, busy_s / wall_s) : 0; }
  double ratio() const { return kernel_s > 0 ? wall_s / kernel_s : 0; }  // step time / sum of kernel times
};

struct BackendTimeline {
  std::string backend;     // "gpu" | "cpu"
  std::string device;
  int batch = 0;           // of the newest step
  Precision precision = Precision::FP32;
  std::vector<TimelineTrack> tracks;   // GPU: queue, host; CPU: one per pool thread (0: the caller)
  std::vector<StepBreakdown> steps;    // oldest first
  double start_s = 0, end_s = 0;       // the extent of every event
  bool empty() const { return steps.empty(); }
  // GPU busy over these steps: their summed busy_s / their summed wall_s (the kernels' share of the wall time; 0
  // without steps). Measured: kernel times from the timestamps, wall time from step end to step end on the host's
  // clock (StepBreakdown::wall_s).
  double busy_share() const;
};

// Keeps the last `capacity` steps of one backend and builds its BackendTimeline. Steps without timing detail
// (start_s == 0) are placed back to back after the previous one. One writer; copy it to read elsewhere.
class TimelineRecorder {
 public:
  explicit TimelineRecorder(size_t capacity = 8) : capacity_(capacity) {}

  size_t capacity() const { return capacity_; }
  void set_capacity(size_t steps);  // at least 1; drops the oldest steps beyond it
  // Adds a finished step run with `plan` (record.kernel_ms has one value per plan entry, else it is ignored).
  void add(const StepPlan& plan, const StepRecord& record);
  // The next step added follows a break that was no step's work (a pause, the other backend's turn, a rebuild, a
  // background compile, a decision-boundary map): its wall time is its own span, not the gap since the step before.
  void add_break() { break_ = true; }
  void clear() { steps_.clear(); }
  size_t size() const { return steps_.size(); }

  BackendTimeline timeline(const std::string& backend, const std::string& device) const;

 private:
  struct Step {
    std::shared_ptr<const StepPlan> plan;
    StepRecord record;
    bool after_break = false;
  };
  size_t capacity_;
  bool break_ = false;
  std::deque<Step> steps_;
};

}  // namespace core
