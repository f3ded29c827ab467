// gpu::Trainer, its state: the parameters read back, export_state / import_state (weights, optimizer state, step
// counters, the fp16 loss scaler), and the uploads of the fp32 master weights (with their 16-bit copy) and of the
// device's loss scaler.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <cstring>
#include <utility>
#include <memory>
#include "core/boundary.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "core/metrics.hpp"
#include "core/progress.hpp"
#include "core/tensor_layout.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/device_fit.hpp"
#include "gpu/kernels.hpp"
#include "gpu/warm_up.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/pipeline.hpp"
#include "gpu/vulkan_trainer.hpp"
#include "core/power.hpp"

namespace gpu::detail {

std::vector<float> VulkanTrainer::parameters() {
  flush_into_ready();
  std::vector<float> p(shape_.param_count);
  buffer(core::Role::Params).download(ctx_, p.data(), p.size() * kF);
  return p;
}

core::TrainerState VulkanTrainer::export_state() {
  flush_into_ready();
  core::TrainerState s;
  s.optimizer = cfg_.optimizer;
  s.params.resize(shape_.param_count);
  buffer(core::Role::Params).download(ctx_, s.params.data(), s.params.size() * kF);
  s.state1.resize(shape_.param_count);
  buffer(core::Role::State1).download(ctx_, s.state1.data(), s.state1.size() * kF);
  if (cfg_.optimizer == core::Optimizer::AdamW) {
    s.state2.resize(shape_.param_count);
    buffer(core::Role::State2).download(ctx_, s.state2.data(), s.state2.size() * kF);
  }
  s.steps = next_step_;
  s.optimizer_steps = t_;
  if (loss_scaling()) {  // the device's scaler state and step clock (skipped steps did not advance it)
    core::LossScalerBuffer device{};
    buffer(core::Role::Scaler).download(ctx_, &device, sizeof device);
    s.loss_scaler = core::scaler_state(device);
    s.optimizer_steps = device.optimizer_steps;
  }
  return s;
}

void VulkanTrainer::import_state(const core::TrainerState& s) {
  if (s.params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "gpu trainer: imported state has the wrong parameter count");
  flush_into_ready();
  upload_params(s.params);
  next_step_ = s.steps;
  const bool same = s.optimizer == cfg_.optimizer && s.state1.size() == shape_.param_count &&
                    (cfg_.optimizer != core::Optimizer::AdamW || s.state2.size() == shape_.param_count);
  if (same) {
    owned(core::Role::State1).upload(ctx_, s.state1.data(), s.state1.size() * kF);
    if (has(core::Role::State2)) owned(core::Role::State2).upload(ctx_, s.state2.data(), s.state2.size() * kF);
    t_ = s.optimizer_steps;
  } else {  // another optimizer: its state starts fresh
    for (core::Role r : {core::Role::State1, core::Role::State2})
      if (has(r)) owned(r).zero(ctx_);
    t_ = 0;
  }
  if (loss_scaling()) upload_scaler(s.loss_scaler, t_);
}

void VulkanTrainer::upload_params(const std::vector<float>& params) {
  owned(core::Role::Params).upload(ctx_, params.data(), params.size() * kF);
  if (!sixteen_bit()) return;
  // The 16-bit copy rounded to nearest even on the host, the same bits the optimizer kernels' store_t writes.
  std::vector<uint16_t> rounded(params.size());
  if (cfg_.precision == core::Precision::FP16)
    core::to_fp16(rounded.data(), params.data(), params.size());
  else
    core::to_bf16(rounded.data(), params.data(), params.size());
  owned(core::Role::Weights16).upload(ctx_, rounded.data(), rounded.size() * sizeof(uint16_t));
}

void VulkanTrainer::upload_scaler(const std::optional<core::LossScalerState>& state, long optimizer_steps) {
  core::LossScalerBuffer device{};
  if (state) {
    core::LossScaler check(scaler_options_);
    check.import_state(*state);  // throws on a corrupt state, before anything is changed
    core::set_scaler_state(device, check.export_state());
  } else {
    device.scale = scaler_options_.init_scale;
  }
  device.found_inf = 0;
  device.optimizer_steps = static_cast<uint32_t>(optimizer_steps);
  // beta^t in double as torch computes it, rounded once; the device multiplies one beta in per applied update.
  device.beta1_pow = static_cast<float>(core::integer_power(double(cfg_.beta1), static_cast<uint64_t>(optimizer_steps)));
  device.beta2_pow = static_cast<float>(core::integer_power(double(cfg_.beta2), static_cast<uint64_t>(optimizer_steps)));
  owned(core::Role::Scaler).upload(ctx_, &device, sizeof device);
  t_ = optimizer_steps;
}

}  // namespace gpu::detail
