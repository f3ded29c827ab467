// run::Session: trains each backend on its own worker thread (or one after the other), feeding BackendRun records
// that any thread can snapshot, and telling an Observer about progress. run::train() is the blocking shortcut.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/memory_budget.hpp"
#include "core/metrics.hpp"
#include "core/model.hpp"
#include "core/trainer.hpp"
#include "run/command.hpp"
#include "run/session_types.hpp"

namespace run {

// The MLP that cfg trains on `data` (core::model_shape, here too for the run layer's users).
using core::model_shape;

// The specs of cfg.backends, in that order: "gpu" -> gpu::make_trainer, "cpu" -> cpu::make_trainer. With
// `compile_ahead` precisions, the GPU backend compiles every pipeline of those in the background between its steps
// (run::BackgroundCompile), so that a switch to one of them answers in seconds; the dashboard's. The GPU's
// host_memory says whether device cfg.device is a software one (false when Vulkan cannot be listed).
std::vector<BackendSpec> backends_from_config(const core::TrainConfig& cfg,
                                              const std::vector<core::Precision>& compile_ahead = {});

// Whether the GPU backend of cfg (device cfg.device, -1: the best) is a software Vulkan device, whose device memory
// is host memory; false without Vulkan or without the gpu backend.
bool gpu_memory_on_host(const core::TrainConfig& cfg);

// The trainers of `specs` for core::check_training_memory.
std::vector<core::NewTrainer> new_trainers(const std::vector<BackendSpec>& specs);

class Worker;
class Turns;

// Owns the worker threads of one training run: one per backend, or one running the backends in turn
// (cfg.sequential). Both trainers start from the same core::init_parameters(shape, cfg.seed) and see the same
// core::epoch_order(). Commands (post, request_reset) are applied by every backend between its steps.
class Session {
 public:
  // `data` and `observer` must outlive the session.
  Session(core::TrainConfig cfg, const core::DataSplit& data, std::vector<BackendSpec> backends, Observer& observer);
  Session(core::TrainConfig cfg, std::shared_ptr<const core::DataSplit> data, std::vector<BackendSpec> backends,
          Observer& observer, SessionOptions options);
  ~Session();  // asks the workers to stop and joins them
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();
  // Blocks until every backend has finished (or stopped with an error); with keep_alive, until request_stop().
  void wait();
  // Asks every worker to stop after its current step; the runs keep what they recorded so far.
  void request_stop();

  // A copy of every backend's record, consistent per backend; safe from any thread at any time (a dashboard calls it
  // once per frame).
  // with_step_rows: also every step's row (BackendRun::step_rows, for the CSV export; it grows with the run, so the
  // dashboard's per-frame snapshots leave it out).
  std::vector<core::BackendRun> snapshot(bool with_step_rows = false) const;

  // Sends a command to every backend (not Reset: use request_reset, which prepares the data and weights), and makes
  // it part of settings(): each backend applies it at its next step boundary.
  void post(const Command& command);

  // Starts training again with `cfg` (new model, dataset, seed or the same): loads the data if it changed and
  // draws the initial weights on a loader thread, so the caller never waits; then every backend restarts from them.
  // A dataset error leaves training as it was and shows in status(); settings() returns to what it was.
  void request_reset(core::TrainConfig cfg);
  // Starts training again with settings(): what the controls show is what both backends run after the reset.
  void request_reset() { request_reset(settings()); }

  // The session's own last message ("loading fashion-mnist...", a dataset error), empty if none.
  std::string status() const;
  // The configuration of the last reset (or the start).
  core::TrainConfig config() const;
  // The one truth for the controls: the configuration of the last reset with every setting posted since (batch size,
  // learning rate, optimizer, precision, CPU threads). A backend runs it once it has applied the commands (compare
  // with its BackendRun::config: what differs is pending there). A change a backend refuses (out of memory, say)
  // returns to what that backend kept running. A Reset restarts every backend with exactly this.
  core::TrainConfig settings() const;
  // Whether the last Pause / Resume asked for a pause (the backends say in BackendRun::paused when they are).
  bool pause_requested() const;
  // The fair mode (SessionOptions::fair): on, the backends take turns, each timed alone.
  void set_fair(bool on);
  bool fair() const;

 private:
  void prepare_reset(core::TrainConfig cfg);
  void loader_loop();  // prepares pending resets, the newest one first, until none is left

  void on_refused(const Command& refused, const core::TrainConfig& running);
  core::HostMemory reset_budget() const;  // what a Reset's trainers may use: available + what the old ones hold

  mutable std::mutex mutex_;  // guards cfg_, settings_, pause_requested_, data_, status_, pending_reset_, loader_busy_
  core::TrainConfig cfg_;
  core::TrainConfig settings_;
  core::TrainConfig settings_before_reset_;  // settings_ before the reset the loader is preparing
  bool pause_requested_ = false;
  std::shared_ptr<const core::DataSplit> data_;
  std::string status_;
  std::optional<core::TrainConfig> pending_reset_;  // the newest reset request not yet taken by the loader
  bool loader_busy_ = false;                        // a loader thread is running (it clears this as it ends)
  Observer& observer_;
  const SessionOptions options_;
  std::vector<BackendSpec> specs_;
  std::unique_ptr<Turns> turns_;  // before the workers: they hold a pointer to it
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::thread loader_;
  std::atomic<bool> stop_{false};
};

// Runs a whole session and returns the records, in the order of `backends`.
std::vector<core::BackendRun> train(const core::TrainConfig& cfg, const core::DataSplit& data,
                                    std::vector<BackendSpec> backends, Observer& observer);

}  // namespace run
