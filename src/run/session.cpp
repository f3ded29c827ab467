// run::Session: the worker threads of a training run, commands to them, and resets prepared off the caller's thread.
#include "run/session.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "run/data.hpp"
#include "run/worker.hpp"

namespace run {

Session::Session(core::TrainConfig cfg, const core::DataSplit& data, std::vector<BackendSpec> backends,
                 Observer& observer)
    // Not owned: the aliasing constructor gives a shared_ptr that never deletes.
    : Session(std::move(cfg), std::shared_ptr<const core::DataSplit>(std::shared_ptr<void>(), &data),
              std::move(backends), observer, SessionOptions{}) {}

Session::Session(core::TrainConfig cfg, std::shared_ptr<const core::DataSplit> data, std::vector<BackendSpec> backends,
                 Observer& observer, SessionOptions options)
    : cfg_(std::move(cfg)), data_(std::move(data)), observer_(observer), options_(options), specs_(std::move(backends)) {
  // One set of initial weights for every backend, so that their loss curves can be compared step by step.
  auto init = std::make_shared<const std::vector<float>>(core::init_parameters(model_shape(cfg_, *data_), cfg_.seed));
  const bool keep_alive = options_.keep_alive && !cfg_.sequential;
  for (const auto& spec : specs_)
    workers_.push_back(
        std::make_unique<Worker>(spec, cfg_, data_, init, observer_, stop_, keep_alive, options_.lower_priority));
}

Session::~Session() {
  request_stop();
  wait();
}

void Session::start() {
  if (!threads_.empty()) throw core::Error(core::ErrorKind::Internal, "run::Session::start() called twice");
  if (cfg_.sequential) {
    threads_.emplace_back([this] {
      for (auto& w : workers_) w->run();
    });
  } else {
    for (auto& w : workers_) threads_.emplace_back([w = w.get()] { w->run(); });
  }
}

void Session::wait() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  if (loader_.joinable()) loader_.join();
}

void Session::request_stop() {
  stop_.store(true);
  for (auto& w : workers_) w->wake();
}

std::vector<core::BackendRun> Session::snapshot() const {
  std::vector<core::BackendRun> runs;
  runs.reserve(workers_.size());
  for (const auto& w : workers_) runs.push_back(w->snapshot());
  return runs;
}

void Session::post(const Command& command) {
  if (command.kind == Command::Kind::Reset)
    throw core::Error(core::ErrorKind::Internal, "run::Session::post: use request_reset for a Reset");
  for (auto& w : workers_) w->post(command);
}

std::string Session::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

core::TrainConfig Session::config() const {
  std::lock_guard lock(mutex_);
  return cfg_;
}

void Session::request_reset(core::TrainConfig cfg) {
  std::lock_guard lock(mutex_);
  status_ = fmt::format("preparing {} ...", cfg.dataset);
  pending_reset_ = std::move(cfg);
  if (loader_busy_) return;  // the running loader takes the newest request when it is done: the caller never waits
  loader_busy_ = true;
  if (loader_.joinable()) loader_.join();  // a loader that already finished its last request
  loader_ = std::thread([this] { loader_loop(); });
}

void Session::loader_loop() {
  for (;;) {
    core::TrainConfig cfg;
    {
      std::lock_guard lock(mutex_);
      if (!pending_reset_) {
        loader_busy_ = false;
        return;
      }
      cfg = std::move(*pending_reset_);
      pending_reset_.reset();
    }
    prepare_reset(std::move(cfg));
  }
}

void Session::prepare_reset(core::TrainConfig cfg) {
  try {
    core::validate(cfg);
    std::shared_ptr<const core::DataSplit> data;
    {
      std::lock_guard lock(mutex_);
      if (same_data(cfg, cfg_)) data = data_;
    }
    if (!data) data = std::make_shared<const core::DataSplit>(load_data(cfg));
    core::validate_against_data(cfg, *data);
    Command reset;
    reset.kind = Command::Kind::Reset;
    reset.config = std::make_shared<const core::TrainConfig>(cfg);
    reset.data = data;
    reset.init_params =
        std::make_shared<const std::vector<float>>(core::init_parameters(model_shape(cfg, *data), cfg.seed));
    {
      std::lock_guard lock(mutex_);
      cfg_ = cfg;
      data_ = data;
      status_.clear();
    }
    for (auto& w : workers_) w->post(reset);
  } catch (const core::Error& e) {
    std::lock_guard lock(mutex_);
    status_ = fmt::format("reset refused: {}", e.what());
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
