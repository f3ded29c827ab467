// One backend's training loop: steps, read-backs by elapsed time, epochs. (The commands applied at the next step
// boundary: worker_commands.cpp; building trainers, at the start and for a change: worker_build.cpp; what the model
// sees and the decision boundary's map: worker_view.cpp.)
#include "run/worker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <iterator>
#include <exception>
#include <new>


#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/memory_budget.hpp"
#include "core/options.hpp"
#include "platform/system.hpp"
#include "run/explain.hpp"

namespace run {

void ActiveClock::start() {
  if (!running_) since_ = Clock::now(), running_ = true;
}

void ActiveClock::stop() {
  if (running_) total_ += std::chrono::duration<double>(Clock::now() - since_).count(), running_ = false;
}

double ActiveClock::seconds() const {
  return total_ + (running_ ? std::chrono::duration<double>(Clock::now() - since_).count() : 0.0);
}

int steps_per_readback(double seconds_per_step, int ring) {
  ring = std::max(ring, 1);
  if (!(seconds_per_step > 0)) return 1;
  const double steps = std::floor(kReadbackSeconds / seconds_per_step);
  return static_cast<int>(std::clamp(steps, 1.0, static_cast<double>(ring)));
}

Worker::Worker(BackendSpec spec, core::TrainConfig cfg, std::shared_ptr<const core::DataSplit> data,
               std::shared_ptr<const std::vector<float>> init_params, Observer& observer,
               const std::atomic<bool>& stop, bool keep_alive, bool lower_priority, size_t timeline_steps,
               RefusalFn on_refused)
    : spec_(std::move(spec)),
      observer_(observer),
      stop_(stop),
      keep_alive_(keep_alive),
      lower_priority_(lower_priority),
      on_refused_(std::move(on_refused)),
      cfg_(std::move(cfg)),
      data_(std::move(data)),
      init_params_(std::move(init_params)),
      timeline_(std::max<size_t>(1, timeline_steps)) {
  run_.name = spec_.name;
  run_.config = cfg_;
  slow_ms_ = test_slowdown_ms(spec_.name);
}

double test_slowdown_ms(const std::string& backend) {
  const char* text = std::getenv("TRAINSCOPE_TEST_SLOW_BACKEND");
  if (!text || !*text) return 0;
  const std::string s = text;
  const size_t colon = s.find(':');
  char* end = nullptr;
  const std::string name = s.substr(0, colon);
  const double ms = colon == std::string::npos ? -1 : std::strtod(s.c_str() + colon + 1, &end);
  if ((name != "gpu" && name != "cpu") || colon == std::string::npos || end == s.c_str() + colon + 1 || *end != '\0' ||
      !(ms >= 0 && ms <= 10000))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("TRAINSCOPE_TEST_SLOW_BACKEND={}: not BACKEND:MS (gpu or cpu, and milliseconds from 0 "
                                  "to 10000 added to each of its steps); unset it (it is a test-only slowdown)",
                                  s));
  return name == backend ? ms : 0;
}

core::BackendRun Worker::snapshot(bool with_step_rows) const {
  std::lock_guard lock(run_mutex_);
  core::BackendRun copy = run_;
  if (with_step_rows) copy.step_rows = step_rows_;
  return copy;
}

void Worker::post(const Command& command) {
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(command);
    commands_waiting_ = true;
  }
  queue_cv_.notify_all();
  if (turns_) turns_->wake_all();  // a worker waiting for its turn applies the command first
}

void Worker::wake() {
  { std::lock_guard lock(queue_mutex_); }  // orders the stop flag before the wake-up
  queue_cv_.notify_all();
}

void Worker::set_status(const std::string& message) {
  std::lock_guard lock(run_mutex_);
  run_.status = message;
}

void Worker::run() {
  if (lower_priority_) platform::lower_this_thread_priority();
  for (;;) {
    // Nothing may escape a worker thread (std::terminate); whatever stops this backend is recorded and reported.
    std::string error;
    try {
      train_until_done();
    } catch (const core::Error& e) {
      error = explain(e);  // with the command-line hint of a Vulkan failure
    } catch (const std::bad_alloc&) {
      error = core::out_of_memory_text("while training");
    } catch (const std::exception& e) {
      error = fmt::format("unexpected error: {}", e.what());
    }
    clock_.stop();
    leave_turn();
    trainer_.reset();  // frees the device memory now; a Reset makes a new trainer
    end_build();
    {
      std::lock_guard lock(run_mutex_);
      if (!error.empty()) run_.error = error;
      run_.finished = true;
      run_.paused = false;
      run_.updated_s = core::monotonic_seconds();
      if (error.empty() && keep_alive_)
        run_.status = fmt::format("finished {} epoch{}: Reset trains again", cfg_.epochs, cfg_.epochs == 1 ? "" : "s");
    }
    if (!error.empty()) observer_.on_error(spec_.name, error);
    if (!keep_alive_ || stop_ || !wait_for_reset()) return;
  }
}

bool Worker::wait_for_reset() {
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    queue_cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    if (stop_) return false;
    Command c = queue_.front();
    queue_.pop_front();
    if (c.kind == Command::Kind::Reset) {
      pending_reset_ = c;
      return true;
    }
    // Other commands change nothing here: the finished run's record keeps the settings it trained with, and a Reset
    // carries the settings the controls show (run::Session::settings()), changes included.
  }
}

void Worker::train_until_done() {
  start_fresh();
  for (int e = 0; (cfg_.epochs == core::kUntilStopped || e < cfg_.epochs) && !stop_;) {
    const int N = data_->train.count;  // per epoch: a reset (Next::Restart) may have brought another dataset
    order_ = core::epoch_order(data_->train.count, cfg_.seed, e);
    trainer_->begin_epoch(order_);
    size_t pos = 0;
    samples_this_epoch_ = 0;
    loss_sum_ = 0;
    losses_ = 0;
    const double epoch_start = clock_.seconds();
    {
      std::lock_guard lock(run_mutex_);
      run_.epoch = e + 1;
      run_.step_in_epoch = 0;
      run_.steps_per_epoch = core::steps_per_epoch(N, cfg_.batch);
    }
    Next next = Next::Train;
    while (pos + static_cast<size_t>(cfg_.batch) <= static_cast<size_t>(N)) {
      // Commands first, outside the turn: a rebuild steps aside (begin_build), so the other backend trains meanwhile.
      next = apply_commands();
      if (next != Next::Train) break;
      // A batch change applied just now is checked against what is left of this epoch: a larger batch that no
      // longer fits ends the epoch here (the rest is dropped, as the last partial batch always is); the next epoch
      // starts with the new size.
      if (pos + static_cast<size_t>(cfg_.batch) > static_cast<size_t>(N)) break;
      if (!take_turn()) continue;  // a command came while it waited for the turn: apply it first
      if (stop_) break;
      clock_.start();
      trainer_->step(pos);
      // The test-only slowdown (TRAINSCOPE_TEST_SLOW_BACKEND): inside the training clock, as a slower device would be.
      if (slow_ms_ > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(slow_ms_));
      if (step_budget_ > 0) --step_budget_;  // a SingleStep is spent by a step taken, not by an epoch's end
      pos += static_cast<size_t>(cfg_.batch);
      samples_this_epoch_ += cfg_.batch;
      // Read back after about kReadbackSeconds of steps (every step when one takes longer): few steps are ever in
      // flight, so a command is applied within a step or two, and the figures on screen stay fresh.
      ++in_flight_;
      if (paused_ || in_flight_ >= in_flight_limit_ ||
          core::monotonic_seconds() - last_collect_s_ >= kReadbackSeconds) {
        collect();
        update_boundary(paused_);
        run_background();
        pass_turn_if_over();
      }
    }
    collect();
    update_boundary(true);
    clock_.stop();
    if (next == Next::Stop || stop_) return;  // a partial epoch is not an epoch
    if (next == Next::Restart) {
      start_fresh();
      e = 0;
      continue;
    }
    const double seconds = clock_.seconds() - epoch_start;
    const core::EvalResult eval = trainer_->evaluate();
    core::EpochRecord record;
    record.epoch = e + 1;
    record.train_loss = losses_ > 0 ? loss_sum_ / static_cast<double>(losses_) : 0;
    record.test_loss = eval.loss;
    record.test_accuracy = eval.accuracy;
    record.seconds = seconds;
    record.samples_per_s = seconds > 0 ? static_cast<double>(samples_this_epoch_) / seconds : 0;
    {
      std::lock_guard lock(run_mutex_);
      run_.epochs.push_back(record);
    }
    observer_.on_epoch(spec_.name, record);
    ++e;
    // An epoch's end is a read-back too: the turn passes here when the slice is over. Without this, a worker whose
    // whole epoch takes less than one read-back (a small --limit on a fast backend) would keep the turn for ever.
    pass_turn_if_over();
  }
}

namespace {

// The CSV row of step record r of `plan`, trained at learning rate lr (a change of learning rate reads back the steps
// before it first). Its wall time runs from the end of the step before (last_end_s, then set to this step's end) where
// both ends are known, else it is the step's own time.
core::StepRow step_row(const core::StepRecord& r, const core::StepPlan& plan, float lr, double& last_end_s) {
  core::StepRow row;
  row.step = r.step;
  row.step_ms = static_cast<float>(r.step_ms);
  double kernel_ms = 0, busy_ms = 0;
  for (size_t i = 0; i < r.kernel_ms.size(); ++i) {
    kernel_ms += r.kernel_ms[i];
    if (i < plan.entries.size() && !plan.entries[i].transfer()) busy_ms += r.kernel_ms[i];
  }
  row.kernel_ms = static_cast<float>(kernel_ms);
  row.kernels_timed = !(r.kernel_ms.empty() && !plan.entries.empty());  // a device without timestamps
  row.busy_ms = static_cast<float>(busy_ms);
  const double end_s = r.start_s > 0 ? r.start_s + r.step_ms * 1e-3 : 0;
  row.wall_ms =
      static_cast<float>(end_s > 0 && last_end_s > 0 && end_s > last_end_s ? (end_s - last_end_s) * 1e3 : r.step_ms);
  last_end_s = end_s;
  row.loss = r.loss;
  row.lr = lr;
  row.loss_scale = r.loss_scale;
  row.batch = plan.batch;
  row.precision = plan.precision;
  row.skipped = r.skipped;
  return row;
}

}  // namespace

void Worker::collect() {
  std::vector<core::StepRecord> records = trainer_->flush();
  const double wall = core::monotonic_seconds();
  // The pace of this trainer (wall time per step, queueing included) sets how many steps the next read-back waits for.
  if (!records.empty() && last_collect_s_ > 0)
    in_flight_limit_ =
        steps_per_readback((wall - last_collect_s_) / static_cast<double>(records.size()), cfg_.readback_interval);
  in_flight_ = 0;
  last_collect_s_ = wall;
  if (records.empty()) return;
  const double now = clock_.seconds();
  // Each step finished before `now` by the durations of the steps read back after it (the GPU ran them in a row).
  std::vector<float> finished(records.size());
  double later_ms = 0;
  for (size_t i = records.size(); i-- > 0;) {
    finished[i] = static_cast<float>(std::max(0.0, now - later_ms * 1e-3));
    later_ms += records[i].step_ms;
  }
  samples_total_ += static_cast<long>(records.size()) * cfg_.batch;
  // Steps trained beside the other backend's build or long step (fair mode) were not timed alone: the rate starts
  // again after them, and the figure shown meanwhile stays the last one measured alone with these settings.
  if (turns_ && turns_->shared_since(turn_index_, shared_mark_)) rate_window_.clear();
  const std::string rate_note = turns_rate_note();
  rate_window_.emplace_back(now, samples_total_);
  while (rate_window_.size() > 2 && now - rate_window_.front().first > 3.0) rate_window_.pop_front();
  double rate = 0;
  if (rate_window_.size() >= 2 && now - rate_window_.front().first >= kSteadySeconds)
    rate = static_cast<double>(samples_total_ - rate_window_.front().second) / (now - rate_window_.front().first);
  // The step timeline and the CSV rows, made outside the lock (only this thread writes run_.device).
  const core::StepPlan& plan = trainer_->plan();
  const float lr = trainer_->learning_rate();
  std::vector<core::StepRow> rows;
  rows.reserve(records.size());
  for (const core::StepRecord& r : records) {
    timeline_.add(plan, r);
    rows.push_back(step_row(r, plan, lr, last_step_end_s_));
  }
  auto timeline = std::make_shared<const core::BackendTimeline>(timeline_.timeline(spec_.name, run_.device));
  int step_in_epoch = 0, steps = 0;
  {
    std::lock_guard lock(run_mutex_);
    const core::StepPlan& plan = trainer_->plan();
    run_.counts = trainer_->execution_counts();
    run_.timeline = std::move(timeline);
    step_rows_.insert(step_rows_.end(), rows.begin(), rows.end());
    for (const core::StepRow& row : rows) run_.busy_s += row.busy_ms * 1e-3, run_.wall_s += row.wall_ms * 1e-3;
    for (size_t i = 0; i < records.size(); ++i) {
      run_.kernels.add(plan, records[i]);
      run_.step_losses.push_back(records[i].loss);
      float t = finished[i];
      if (!run_.step_seconds.empty()) t = std::max(t, run_.step_seconds.back());
      run_.step_seconds.push_back(t);
      account_step(records[i], plan, t);
    }
    run_.step_in_epoch = std::min(static_cast<int>(samples_this_epoch_ / cfg_.batch), run_.steps_per_epoch);
    run_.steps_since_change = steps_since_build_;
    run_.elapsed_s = now;
    run_.updated_s = wall;
    if (rate > 0) run_.recent_samples_per_s = rate;
    run_.rate_note = rate_note;
    step_in_epoch = run_.step_in_epoch;
    steps = run_.steps_per_epoch;
  }
  for (const auto& r : records) {
    if (!std::isfinite(r.loss)) continue;  // an fp16 step whose forward pass overflowed (and was skipped)
    loss_sum_ += r.loss;
    ++losses_;
  }
  // Observer time is not training time.
  clock_.stop();
  observer_.on_steps(spec_.name, records, run_.epoch, step_in_epoch, steps);
  check_divergence(records);
}

void Worker::account_step(const core::StepRecord& r, const core::StepPlan& plan, double seconds) {
  // The speed of each (precision, batch size): the first step of each trainer is warm-up and left out.
  if (steps_since_build_++ > 0) {
    auto it = std::find_if(run_.precisions.begin(), run_.precisions.end(), [&](const core::PrecisionRow& row) {
      return row.precision == plan.precision && row.batch == plan.batch;
    });
    if (it == run_.precisions.end()) {
      core::PrecisionRow row;
      row.precision = plan.precision;
      row.batch = plan.batch;
      row.kernels = core::KernelTable(0);  // this step is already past the trainer's warm-up step
      run_.precisions.push_back(std::move(row));
      it = std::prev(run_.precisions.end());
    }
    it->kernels.add(plan, r);
    it->steps += 1;
    it->step_ms += r.step_ms;
    it->bytes += plan.total_bytes();
    it->flops += plan.total_flops();
    it->skipped += r.skipped ? 1 : 0;
  }
  if (r.loss_scale > 0) run_.loss_scale = r.loss_scale;
  // fp16 overflows: consecutive skipped steps become one marker once the run of skips ends.
  if (r.skipped) {
    ++run_.skipped_steps;
    if (skip_run_count_++ == 0) {
      skip_run_first_step_ = r.step;
      skip_run_seconds_ = seconds;
      skip_run_first_scale_ = r.loss_scale;
    }
  } else if (skip_run_count_ > 0) {
    run_.markers.push_back({skip_run_first_step_, skip_run_seconds_,
                            fmt::format("fp16 overflow: {} step{} skipped, scale {:g} -> {:g}", skip_run_count_,
                                        skip_run_count_ == 1 ? "" : "s", skip_run_first_scale_, r.loss_scale)});
    skip_run_count_ = 0;
  }
}

void Worker::check_divergence(const std::vector<core::StepRecord>& records) {
  for (const auto& r : records) {
    // fp16: a skipped step leaves the weights untouched, and the halved scale usually cures the overflow. Once even
    // a scale of 2^-24 (fp16's smallest subnormal: below it every scaled gradient is 0) overflows, the forward pass
    // itself produces inf/NaN: the model has diverged and more steps cannot help.
    if (r.skipped && r.loss_scale > 0 && r.loss_scale <= 0x1p-24f)
      throw core::Error(core::ErrorKind::Diverged,
                        fmt::format("fp16 training stopped at step {}: its gradients overflowed at every loss scale "
                                    "down to {:g} ({} steps skipped); the model has diverged. The fp32 master weights "
                                    "were not changed by the skipped steps. Lower the learning rate, or train in bf16 "
                                    "or fp32",
                                    r.step + 1, r.loss_scale, skip_run_count_));
    if (!r.skipped && !std::isfinite(r.loss))
      throw core::Error(core::ErrorKind::Diverged,
                        fmt::format("training stopped at step {}: the loss is {} ({}); the model has diverged. Lower "
                                    "the learning rate{}",
                                    r.step + 1, r.loss, core::to_string(cfg_.precision),
                                    cfg_.precision == core::Precision::FP16 ? "" : ", or try fp16 with loss scaling"));
  }
}

}  // namespace run
