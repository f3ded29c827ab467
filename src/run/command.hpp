// run::Command: what the dashboard asks of a running training, applied by each backend's worker between steps.
#pragma once
#include <memory>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/settings_schema.hpp"

namespace run {

struct Command {
  enum class Kind {
    Pause,            // stop after the current step (queued GPU steps are read back first)
    Resume,
    SingleStep,       // while paused: train exactly one step, then stay paused
    SetBatch,         // value: new batch size; the buffers are reallocated, weights and optimizer state kept
    SetLearningRate,  // lr: from the next step
    SetOptimizer,     // optimizer: parameters kept, the new optimizer's state starts fresh
    SetThreads,       // value: CPU threads (the GPU backend ignores it)
    SetPrecision,     // precision: the 16-bit copies are made from the fp32 master weights; training state kept
    SetToggle,        // toggle, on: one teaching toggle (--unfused, ...); a rebuild keeping the training state
    SetInput,         // input: the input pipeline (--input, --augment, ...); a rebuild keeping the training state
    Reset,            // start again from `init_params` with `config` on `data` (a new model or dataset, or the same)
  };

  Command() = default;
  explicit Command(Kind k) : kind(k) {}

  Kind kind = Kind::Pause;
  int value = 0;
  float lr = 0;
  core::Optimizer optimizer = core::Optimizer::AdamW;
  core::Precision precision = core::Precision::FP32;
  core::Execution::Toggle toggle = core::Execution::Toggle::Unfused;
  bool on = false;
  core::InputPipeline input;
  // Reset only: prepared once (off the UI thread) and shared by every backend, so that all start identical.
  std::shared_ptr<const core::TrainConfig> config;
  std::shared_ptr<const core::DataSplit> data;
  std::shared_ptr<const std::vector<float>> init_params;
};

// The setting a Set* command changes, written into `cfg` (batch, lr, optimizer, threads, precision, a toggle, the
// input pipeline); the
// other kinds change no setting. Inline: the session's settings and the lessons' resets apply commands alike.
inline void apply_setting(const Command& c, core::TrainConfig& cfg) {
  using K = Command::Kind;
  switch (c.kind) {
    case K::SetBatch: cfg.batch = c.value; break;
    case K::SetLearningRate: cfg.lr = c.lr; break;
    case K::SetOptimizer: cfg.optimizer = c.optimizer; break;
    case K::SetThreads: cfg.threads = c.value; break;
    case K::SetPrecision: cfg.precision = c.precision; break;
    case K::SetToggle: cfg.execution[c.toggle] = c.on; break;
    case K::SetInput: cfg.input = c.input; break;
    case K::Pause: case K::Resume: case K::SingleStep: case K::Reset: break;
  }
}

// The command that changes the live setting `s` (core::SettingChange::Live) to its value in `cfg`: SetBatch with
// cfg.batch, SetToggle for a teaching toggle, SetInput with the whole of cfg.input for any input pipeline setting.
// Throws core::Error(Internal) for a row that is not live, or a live row without a command here (a new live setting
// needs its Command kind: test_run_command checks every live row).
Command live_command(const core::Setting& s, const core::TrainConfig& cfg);

}  // namespace run
