// The training loop of one backend (epochs, steps, read-backs, evaluation) and the threads that run it.
#include "run/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "core/batches.hpp"
#include "core/error.hpp"

namespace run {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

core::ModelShape model_shape(const core::TrainConfig& cfg, const core::DataSplit& data) {
  std::vector<int> dims{data.train.features};
  dims.insert(dims.end(), cfg.hidden.begin(), cfg.hidden.end());
  dims.push_back(data.train.classes);
  return core::ModelShape(dims);
}

Session::Session(core::TrainConfig cfg, const core::DataSplit& data, std::vector<BackendSpec> backends,
                 Observer& observer)
    : cfg_(std::move(cfg)), data_(data), observer_(observer) {
  for (auto& spec : backends) {
    auto slot = std::make_unique<Slot>();
    slot->run.name = spec.name;
    slot->run.config = cfg_;
    slot->spec = std::move(spec);
    slots_.push_back(std::move(slot));
  }
}

Session::~Session() {
  request_stop();
  wait();
}

void Session::start() {
  if (!workers_.empty()) throw core::Error(core::ErrorKind::Internal, "run::Session::start() called twice");
  // One set of initial weights for every backend, so that their loss curves can be compared step by step.
  init_params_ = core::init_parameters(model_shape(cfg_, data_), cfg_.seed);
  if (cfg_.sequential) {
    workers_.emplace_back([this] {
      for (auto& slot : slots_) run_backend(*slot);
    });
  } else {
    for (auto& slot : slots_) workers_.emplace_back([this, s = slot.get()] { run_backend(*s); });
  }
}

void Session::wait() {
  for (auto& w : workers_)
    if (w.joinable()) w.join();
}

std::vector<core::BackendRun> Session::snapshot() const {
  std::vector<core::BackendRun> runs;
  runs.reserve(slots_.size());
  for (const auto& slot : slots_) {
    std::lock_guard lock(slot->mutex);
    runs.push_back(slot->run);
  }
  return runs;
}

void Session::run_backend(Slot& slot) {
  // Nothing may escape a worker thread (std::terminate); whatever stops this backend is recorded and reported.
  try {
    train_backend(slot);
    std::lock_guard lock(slot.mutex);
    slot.run.finished = true;
  } catch (const core::Error& e) {
    fail(slot, e.what());
  } catch (const std::exception& e) {
    fail(slot, fmt::format("unexpected error: {}", e.what()));
  }
}

void Session::fail(Slot& slot, const std::string& message) {
  {
    std::lock_guard lock(slot.mutex);
    slot.run.error = message;
    slot.run.finished = true;
  }
  observer_.on_error(slot.spec.name, message);
}

void Session::train_backend(Slot& slot) {
  const std::string& name = slot.spec.name;
  if (stop_) return;
  std::unique_ptr<core::Trainer> trainer = slot.spec.make(cfg_, data_, init_params_);
  const std::string device = trainer->device_name();
  {
    std::lock_guard lock(slot.mutex);
    slot.run.device = device;
  }
  observer_.on_start(name, device);

  const core::StepPlan& plan = trainer->plan();
  const int batch = plan.batch;
  const int steps = core::steps_per_epoch(data_.train.count, batch);
  for (int e = 0; e < cfg_.epochs && !stop_; ++e) {
    const std::vector<uint32_t> order = core::epoch_order(data_.train.count, cfg_.seed, e);
    const Clock::time_point t0 = Clock::now();
    double observer_s = 0;  // time spent in observer callbacks, left out of the epoch's training time
    double loss_sum = 0;
    int done = 0;  // steps of this epoch whose records came back

    // Waits for the queued steps (the GPU synchronises here) and records them.
    auto collect = [&] {
      std::vector<core::StepRecord> records = trainer->flush();
      if (records.empty()) return;
      {
        std::lock_guard lock(slot.mutex);
        for (const auto& r : records) {
          slot.run.kernels.add(plan, r);
          slot.run.step_losses.push_back(r.loss);
        }
      }
      for (const auto& r : records) loss_sum += r.loss;
      done += static_cast<int>(records.size());
      const Clock::time_point c0 = Clock::now();
      observer_.on_steps(name, records, e + 1, done, steps);
      observer_s += seconds_since(c0);
    };

    trainer->begin_epoch(order);
    int s = 0;
    for (; s < steps && !stop_; ++s) {
      // Between two steps: where a dashboard's commands (pause, batch size, ...) will be applied.
      trainer->step(static_cast<size_t>(s) * batch);
      if ((s + 1) % std::max(1, cfg_.readback_interval) == 0) collect();
    }
    collect();
    const double seconds = seconds_since(t0) - observer_s;
    if (s < steps) break;  // stopped inside the epoch: a partial epoch is not an epoch

    const core::EvalResult eval = trainer->evaluate();
    core::EpochRecord record;
    record.epoch = e + 1;
    record.train_loss = done > 0 ? loss_sum / done : 0;
    record.test_loss = eval.loss;
    record.test_accuracy = eval.accuracy;
    record.seconds = seconds;
    record.samples_per_s = seconds > 0 ? static_cast<double>(steps) * batch / seconds : 0;
    {
      std::lock_guard lock(slot.mutex);
      slot.run.epochs.push_back(record);
    }
    observer_.on_epoch(name, record);
  }
}

std::vector<core::BackendRun> train(const core::TrainConfig& cfg, const core::DataSplit& data,
                                    std::vector<BackendSpec> backends, Observer& observer) {
  Session session(cfg, data, std::move(backends), observer);
  session.start();
  session.wait();
  return session.snapshot();
}

}  // namespace run
