// The whole-step reference: one training step of the MLP in double, written top to bottom as llm.c's train_gpt2.c
// writes its step (gather, forward layer by layer, softmax cross-entropy, backward layer by layer, the optimizer,
// fp16's loss scaling), and the evaluation. It is the oracle every backend x precision x optimizer x teaching toggle
// is tested against, step by step (tests/test_train_step.cpp), so that a mistake two backends share, or one that only
// shows when the kernels are put together (a binding, a buffer, a step counter), cannot hide. It is written apart from
// the kernels' own references (src/cpu/ops/) on purpose: a slip in one of those would be shared by the kernel it
// checks, not by this. Not used for training, not tuned, not threaded.
//
// Arithmetic in double; every tensor is stored as the backends store it, rounded to its element type at the same
// places: the storage type (fp32, fp16 or bf16) for the batch input, the weights the kernels read, pre-activations,
// activations, logits and every gradient; fp32 for the master weights and the optimizer state. So the precisions differ
// here exactly as they do on the devices (mixed precision: Micikevicius et al. 2018), and in fp16 an overflowing
// gradient becomes inf just as it does there (found_inf, a skipped step). --unfused is the same math in fp32; in 16-bit
// its GEMM's sums are rounded before the bias is added, and so they are here.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/loss_scaler.hpp"
#include "core/model.hpp"
#include "core/trainer.hpp"

namespace cpu::reference {

// What a training run carries from step to step.
struct TrainState {
  std::vector<double> params;  // the fp32 master parameters (ModelShape layout, padding 0)
  std::vector<double> m, v;    // AdamW's first and second moments; SGD's momentum buffer in m (v unused)
  long t = 0;                  // optimizer updates applied (the next one is t + 1; a skipped fp16 step is none)
  core::LossScalerState scaler;  // fp16: the dynamic loss scale (torch.cuda.amp.GradScaler's state)
};

// The state before the first step: `params` (core::init_parameters), zero moments; fp16: the scale at
// cfg.loss_scale_init.
TrainState initial_state(const core::TrainConfig& cfg, const std::vector<float>& params);

struct StepResult {
  double loss = 0;             // mean cross-entropy over the batch
  double loss_scale = 0;       // fp16: the scale this step's backward pass used; 0 otherwise
  bool skipped = false;        // fp16: a gradient overflowed, so the update was skipped
  double overflow_margin = 0;  // fp16: the largest scaled gradient / 65504, fp16's largest finite value (> 1: inf)
};

// One step of `cfg` (model, activation, optimizer and its settings, precision, loss_scale_init, execution.unfused) on
// the training samples rows[0..B) of `train`, updating `state`. B = rows.size(); `shape` = core::model_shape(cfg, ...).
StepResult train_step(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& train,
                      std::span<const uint32_t> rows, TrainState& state);

// Mean cross-entropy and accuracy (the first maximum of the logits is the prediction) of the weights in `state` on
// every sample of `test`, the forward pass stored as in training.
core::EvalResult evaluate(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& test,
                          const TrainState& state);

// The logits (rows.size() x classes, row-major) of the weights in `state` for the samples `rows` of `data`, the
// forward pass stored as in training: what a check of a backend's predictions (their first maximum) compares with.
std::vector<double> logits(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& data,
                           std::span<const uint32_t> rows, const TrainState& state);

}  // namespace cpu::reference
