// run::Session: the worker threads of a training run, commands to them, and resets prepared off the caller's thread.
#include "run/session.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "run/data.hpp"
#include "run/preflight.hpp"
#include "run/validate.hpp"
#include "run/worker.hpp"

namespace run {

Session::Session(core::TrainConfig cfg, const core::DataSplit& data, std::vector<BackendSpec> backends,
                 Observer& observer)
    // Not owned: the aliasing constructor gives a shared_ptr that never deletes.
    : Session(std::move(cfg), std::shared_ptr<const core::DataSplit>(std::shared_ptr<void>(), &data),
              std::move(backends), observer, SessionOptions{}) {}

Session::Session(core::TrainConfig cfg, std::shared_ptr<const core::DataSplit> data, std::vector<BackendSpec> backends,
                 Observer& observer, SessionOptions options)
    : cfg_(std::move(cfg)),
      settings_(cfg_),
      data_(std::move(data)),
      observer_(observer),
      options_(options),
      specs_(std::move(backends)) {
  // One set of initial weights for every backend, so that their loss curves can be compared step by step.
  auto init = std::make_shared<const std::vector<float>>(core::init_parameters(model_shape(cfg_, *data_), cfg_.seed));
  const bool keep_alive = options_.keep_alive && !cfg_.sequential;
  auto refused = [this](const Command& c, const core::TrainConfig& running) { on_refused(c, running); };
  for (const auto& spec : specs_)
    workers_.push_back(std::make_unique<Worker>(spec, cfg_, data_, init, observer_, stop_, keep_alive,
                                                options_.lower_priority, options_.timeline_steps, refused));
  // Turns (the fair mode) between workers that train at the same time: made whenever there are two, so that the
  // mode can be switched on while training.
  if (!cfg_.sequential && workers_.size() > 1) {
    turns_ = std::make_unique<Turns>(workers_.size(), Turns::kSliceSeconds, options_.fair);
    for (size_t i = 0; i < workers_.size(); ++i) workers_[i]->set_turns(turns_.get(), i);
  }
}

void Session::set_fair(bool on) {
  if (turns_) turns_->set_enabled(on);
}

bool Session::fair() const { return turns_ && turns_->enabled(); }

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
  if (turns_) turns_->wake_all();
}

std::vector<core::BackendRun> Session::snapshot(bool with_step_rows) const {
  std::vector<core::BackendRun> runs;
  runs.reserve(workers_.size());
  for (const auto& w : workers_) runs.push_back(w->snapshot(with_step_rows));
  return runs;
}

void Session::post(const Command& command) {
  using K = Command::Kind;
  if (command.kind == K::Reset)
    throw core::Error(core::ErrorKind::Internal, "run::Session::post: use request_reset for a Reset");
  {
    std::lock_guard lock(mutex_);
    if (command.kind == K::Pause) pause_requested_ = true;
    if (command.kind == K::Resume) pause_requested_ = false;
    apply_setting(command, settings_);
    for (auto& w : workers_) w->post(command);  // under the lock: in order with a reset being posted
  }
}

void Session::on_refused(const Command& c, const core::TrainConfig& running) {
  // The refused value leaves the settings, so that the controls never show (and a Reset never restarts with) a
  // value that no backend could take; the backend's status says why.
  using K = Command::Kind;
  std::lock_guard lock(mutex_);
  if (c.kind == K::SetBatch && settings_.batch == c.value) settings_.batch = running.batch;
  if (c.kind == K::SetOptimizer && settings_.optimizer == c.optimizer) settings_.optimizer = running.optimizer;
  if (c.kind == K::SetThreads && settings_.threads == c.value) settings_.threads = running.threads;
  if (c.kind == K::SetPrecision && settings_.precision == c.precision) settings_.precision = running.precision;
  if (c.kind == K::SetToggle && settings_.execution[c.toggle] == c.on)
    settings_.execution[c.toggle] = running.execution[c.toggle];
  if (c.kind == K::SetInput && settings_.input == c.input) settings_.input = running.input;
}

core::TrainConfig Session::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

bool Session::pause_requested() const {
  std::lock_guard lock(mutex_);
  return pause_requested_;
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
  if (!loader_busy_) settings_before_reset_ = settings_;  // what runs, should this reset be refused
  settings_ = cfg;
  pause_requested_ = false;  // a reset trains
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

core::HostMemory Session::reset_budget() const {
  // A Reset frees each worker's trainer before it builds the new one: what they hold now is available to it.
  core::HostMemory host = core::host_memory();
  for (size_t i = 0; i < workers_.size(); ++i)
    if (specs_[i].host_memory) host.available += static_cast<double>(workers_[i]->snapshot().memory.total());
  return host;
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
    run::PreflightOptions check;
    check.host = reset_budget();
    check.threads = false;
    run::preflight(cfg, *data, new_trainers(specs_), check);
    auto init = std::make_shared<const std::vector<float>>(core::init_parameters(model_shape(cfg, *data), cfg.seed));
    // Under the lock, so that no command slips in between: a setting posted while the data was being prepared is
    // part of the reset (the controls show it), and the backends get the reset after every earlier command.
    std::lock_guard lock(mutex_);
    core::TrainConfig live = cfg;
    live.batch = settings_.batch;
    live.lr = settings_.lr;
    live.optimizer = settings_.optimizer;
    live.precision = settings_.precision;
    live.threads = settings_.threads;
    try {
      run::validate_for_backends(live, *data);
      cfg = live;
    } catch (const core::Error&) {  // e.g. a batch larger than the new dataset: the reset's own settings win
    }
    Command reset;
    reset.kind = Command::Kind::Reset;
    reset.config = std::make_shared<const core::TrainConfig>(cfg);
    reset.data = data;
    reset.init_params = init;
    cfg_ = cfg;
    settings_ = cfg;
    data_ = data;
    status_.clear();
    for (auto& w : workers_) w->post(reset);
  } catch (const core::Error& e) {
    std::lock_guard lock(mutex_);
    status_ = fmt::format("reset refused: {}", e.what());
    // The backends keep what they run; the controls show it again (unless a newer reset is on its way).
    if (!pending_reset_) settings_ = settings_before_reset_;
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
