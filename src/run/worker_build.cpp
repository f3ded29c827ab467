// How a worker builds its trainer: at the start or a Reset (fresh weights), and for a change of batch size,
// optimizer, precision or threads (a new trainer continuing from the old one's state). While a build runs, the
// BackendRun says what is being applied and which stage the build has reached, so a slow device shows progress.
#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/memory_budget.hpp"
#include "core/progress.hpp"
#include "run/explain.hpp"
#include "run/preflight.hpp"
#include "run/validate.hpp"
#include "run/worker.hpp"

namespace run {

void Worker::begin_build(const std::string& what) {
  // A build is no training: the other backend trains meanwhile (fair mode), and never waits for this one's
  // compilation or rebuild. The loop takes the turn again before the next step.
  if (turns_) turns_->begin_aside(turn_index_);
  std::lock_guard lock(run_mutex_);
  run_.building = true;
  run_.building_what = what;
  run_.build_stage.clear();
  run_.build_started_s = core::monotonic_seconds();
}

void Worker::set_build_stage(std::string_view stage) {
  std::lock_guard lock(run_mutex_);
  run_.build_stage = stage;
}

void Worker::end_build() {
  if (turns_) turns_->end_aside(turn_index_);
  std::lock_guard lock(run_mutex_);
  run_.building = false;
  run_.building_what.clear();
  run_.build_stage.clear();
}

void Worker::refuse(const Command& c, const std::string& message) {
  set_status(message);
  if (on_refused_) on_refused_(c, cfg_);
}

void Worker::start_fresh() {
  if (pending_reset_.config) {
    cfg_ = *pending_reset_.config;
    data_ = pending_reset_.data;
    init_params_ = pending_reset_.init_params;
    pending_reset_ = Command{};
  }
  trainer_.reset();
  clock_.reset();
  rate_window_.clear();
  timeline_.clear();
  last_step_end_s_ = 0;
  samples_total_ = 0;
  paused_ = false;
  step_budget_ = 0;
  steps_since_build_ = 0;
  skip_run_count_ = 0;
  in_flight_ = 0;
  in_flight_limit_ = 1;
  last_collect_s_ = 0;
  // A Reset may get a new device (after a device loss): the background work starts again, and on the same device it
  // ends at once (everything is compiled and run).
  background_done_ = false;
  background_due_s_ = 0;
  {
    std::lock_guard lock(run_mutex_);
    const std::string name = run_.name;
    run_ = core::BackendRun{};
    step_rows_.clear();
    run_.name = name;
    run_.config = cfg_;
    run_.generation = ++generation_;
  }
  if (stop_) return;
  begin_build("start");
  {
    core::ScopedProgress listen([this](std::string_view stage) { set_build_stage(stage); });
    set_build_stage("creating the trainer");
    trainer_ = spec_.make(cfg_, *data_, *init_params_);
  }
  const std::string device = publish_trainer_info();
  prepare_boundary();
  update_boundary(true);  // the untrained model's map, before the first step
  end_build();
  observer_.on_start(spec_.name, device);
}

std::string Worker::publish_trainer_info() {
  const std::string device = trainer_->device_name();
  const core::MemoryUsage memory = trainer_->memory_usage();
  const core::MemoryUsage memory_fp32 = trainer_->memory_usage_fp32();
  std::vector<std::string> unsupported;
  for (core::Precision p : {core::Precision::FP32, core::Precision::FP16, core::Precision::BF16})
    unsupported.push_back(trainer_->unsupported_reason(p));
  core::BackendRun::Running running;
  const core::StepPlan& plan = trainer_->plan();
  running.dims = plan.shape.dims;
  running.hidden = plan.shape.hidden();
  running.conv = plan.shape.conv_channels();
  running.model = plan.shape.describe();
  running.batch = plan.batch;
  running.activation = plan.activation;
  running.optimizer = plan.optimizer;
  running.precision = plan.precision;
  running.lr = trainer_->learning_rate();
  running.unfused = plan.unfused;
  running.execution = cfg_.execution;
  running.input = cfg_.input;
  const core::AttentionTraffic attention = core::attention_traffic(plan);
  running.attention_bytes_fused = attention.fused;
  running.attention_bytes_naive = attention.naive;
  std::lock_guard lock(run_mutex_);
  run_.counts = trainer_->execution_counts();
  run_.running = std::move(running);
  run_.steps_since_change = 0;
  run_.config = cfg_;
  run_.device = device;
  run_.memory = memory;
  run_.memory_fp32 = memory_fp32;
  run_.precision_unsupported = std::move(unsupported);
  run_.updated_s = core::monotonic_seconds();
  if (cfg_.precision != core::Precision::FP16) run_.loss_scale = 0;
  return device;
}

void Worker::rebuild(const Command& c, const core::TrainConfig& next, const std::string& label) {
  // A new trainer for the new settings, continuing from the current weights and optimizer state. If it cannot be
  // made (e.g. out of GPU memory for a huge batch), the current one keeps training and the refusal is shown.
  begin_build(label);
  set_build_stage("finishing its steps");
  collect();
  clock_.stop();
  std::unique_ptr<core::Trainer> fresh;
  try {
    core::ScopedProgress listen([this](std::string_view stage) { set_build_stage(stage); });
    set_build_stage("saving the state");
    const core::TrainerState state = trainer_->export_state();
    // This backend's new trainer is built while the old one still holds its memory (a failed build keeps it).
    run::PreflightOptions check;
    check.threads = false;
    run::preflight(next, *data_, {{spec_.name, spec_.host_memory}}, check);
    set_build_stage("creating the trainer");
    fresh = spec_.make(next, *data_, state.params);
    set_build_stage("restoring the state");
    fresh->import_state(state);
    fresh->begin_epoch(order_);
  } catch (const std::bad_alloc&) {
    end_build();
    refuse(c, fmt::format("{} refused: out of memory", label));
    return;
  } catch (const core::Error& e) {
    end_build();
    refuse(c, fmt::format("{} refused: {}", label, explain(e)));
    return;
  }
  trainer_ = std::move(fresh);
  cfg_ = next;
  steps_since_build_ = 0;
  last_step_end_s_ = 0;  // the rebuild's time is no step's
  timeline_.add_break();
  // The new trainer's pace is not known yet: read back after its first step. Its rate window starts empty, so that
  // no samples/s (and no speedup) ever mixes two settings.
  in_flight_ = 0;
  in_flight_limit_ = 1;
  rate_window_.clear();
  {
    std::lock_guard lock(run_mutex_);
    run_.recent_samples_per_s = 0;
    run_.kernels = core::KernelTable();  // timings of the new configuration only
    run_.steps_per_epoch = core::steps_per_epoch(data_->train.count, cfg_.batch);
    // The epoch's steps so far in the new size's steps, so that the header never reads "6/1" (issue 25).
    run_.step_in_epoch = std::min(static_cast<int>(samples_this_epoch_ / cfg_.batch), run_.steps_per_epoch);
    run_.markers.push_back({static_cast<long>(run_.step_losses.size()), clock_.seconds(), label});
    run_.status = label;
  }
  publish_trainer_info();  // the new settings, memory and device, in one update with the end of the build
  end_build();
}

}  // namespace run
