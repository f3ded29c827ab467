// gpu::Trainer: a training step recorded as one command buffer of dispatches, one timestamp after each; losses and
// timestamps read back every readback_interval steps, so the GPU never waits for the host inside a step.
// The teaching toggles (core::Execution): --sync-every-step waits for each step and reads its loss at once;
// --submit-per-kernel records, submits and waits for every kernel on its own; --unfused is in the plan itself.
// Mixed precision (cfg.precision fp16/bf16): activations, gradients and the weights the kernels read are 16-bit
// buffers; the optimizer keeps fp32 master weights and state and writes the 16-bit weights copy. fp16 adds dynamic
// loss scaling entirely on the device (check_finite_grads, skip in the optimizer, update_loss_scale), so a step never
// waits for the host to decide whether to skip; the host learns the scale and the skips at read-back.
// This header: gpu::detail::VulkanTrainer, the trainer gpu::make_trainer (gpu/trainer.hpp) makes, declared for the
// files that implement it along its seams:
//   trainer.cpp        construction and destruction: the tensors of core::TensorLayout as buffers, the descriptor
//                      sets, the warm-up of the plan's kernels, the read-back ring
//   trainer_step.cpp   a training step recorded and submitted, the fence waits, the losses and timestamps read back
//   trainer_eval.cpp   evaluation and prediction: core::forward_pass recorded batch by batch
//   trainer_state.cpp  parameters, export_state / import_state, the uploads of the weights and the loss scaler
// Internal to src/gpu.
#pragma once
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <cstring>
#include <utility>
#include <memory>
#include "core/boundary.hpp"
#include "core/error.hpp"
#include "core/run_plan.hpp"
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

namespace gpu::detail {

using vk::Buffer;
using vk::BufferRange;
using vk::MemoryKind;

constexpr VkDeviceSize kF = sizeof(float);

class VulkanTrainer final : public core::Trainer {
 public:
  VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params,
                DeviceCache& cache);
  // With the run's plan (core::run_plan(cfg, data)) worked out by the caller.
  VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, core::RunPlan run,
                const std::vector<float>& init_params, DeviceCache& cache);
  ~VulkanTrainer() override;

  const char* backend() const override { return "gpu"; }
  std::string device_name() const override {
    return vk::display_name(ctx_.info()) + (timed_ ? "" : " [no timestamps on its compute queue: kernel times "
                                                          "unavailable]");
  }
  const core::StepPlan& plan() const override { return plan_; }
  void begin_epoch(std::span<const uint32_t> order) override;
  void step(size_t first) override;
  std::vector<core::StepRecord> flush() override;
  core::EvalResult evaluate() override;
  std::vector<float> parameters() override;
  core::TrainerState export_state() override;
  void import_state(const core::TrainerState& state) override;
  void set_learning_rate(float lr) override { cfg_.lr = lr; }
  float learning_rate() const override { return cfg_.lr; }
  core::MemoryUsage memory_usage() const override { return memory_; }
  core::MemoryUsage memory_usage_fp32() const override { return memory_fp32_; }
  std::string unsupported_reason(core::Precision p) const override {
    std::string why;
    return precision_supported(ctx_.info(), p, &why) ? std::string() : why;
  }
  core::ExecutionCounts execution_counts() const override { return counts_; }
  void set_batch_source(std::unique_ptr<core::BatchSource> source) override;
  std::vector<int32_t> predict(std::span<const float> x, size_t count) override;

  // Summed size() of every buffer member, walked one by one: the tests' independent check of memory_usage().
  size_t buffer_bytes() const;
  const GemmConfig& gemm_config() const { return kernels_.gemm_config(); }

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk::TimestampQueries queries;
    long step = 0;
    std::vector<core::HostSpan> host;  // the step timeline: when the host recorded and submitted this step
    std::vector<core::LoaderSpan> loader;  // --input host: the loader's work on this step's batch
    Buffer pageable;  // --input host --pageable: the fresh staging buffer of this step's batch
  };

  // The buffer of a layout tensor (the training one of its role and layer, or the evaluation's); owned(): one this
  // trainer made (not the dataset's), to write; has(): whether this configuration has the tensor.
  const Buffer& buffer(core::Role role, int layer = -1, bool evaluation = false) const {
    return *bound_.at(static_cast<size_t>(layout_.find(role, layer, evaluation)));
  }
  Buffer& owned(core::Role role) { return buffers_.at(static_cast<size_t>(layout_.find(role))); }
  bool has(core::Role role) const { return layout_.find(role) >= 0; }
  bool sixteen_bit() const { return kE_ != kF; }
  bool loss_scaling() const { return plan_.loss_scaling(); }
  void upload_params(const std::vector<float>& params);  // the masters and, in 16-bit, their rounded copy
  void upload_scaler(const std::optional<core::LossScalerState>& state, long optimizer_steps);
  void allocate_buffers();  // every tensor of layout_, and the memory figures from it
  void flush_into_ready();  // waits for the submitted steps and moves their records to ready_
  void build_descriptor_sets();
  // The buffer (range) a trainer role takes for layer l (kernel_table.hpp), in training or evaluation.
  BufferRange resolve(core::Role role, int l, bool evaluation) const;
  // e's bindings, in the table's order, from `pool`: its roles' tensors in training or evaluation, or the buffers of
  // `overrides` for the roles they name (predict()'s points in place of the dataset).
  using Override = std::pair<core::Role, const Buffer*>;
  EntrySets make_set(vk::DescriptorPool& pool, const core::PlanEntry& e, bool evaluation,
                     std::span<const Override> overrides = {});
  // The entries of a forward pass (core::forward_pass) with their sets, each followed by a compute barrier: each
  // kernel reads what the one before it wrote (RAW), and the next batch overwrites what the last one read (WAR).
  void record_pass(VkCommandBuffer cmd, const std::vector<core::PlanEntry>& pass, const std::vector<EntrySets>& sets,
                   const core::StepArgs& args) const;
  void record_step(Slot& slot, size_t first, uint32_t slot_index);
  // --submit-per-kernel: each entry of the step recorded into the slot's command buffer alone, submitted, waited for.
  void run_step_per_kernel(Slot& slot, size_t first, uint32_t slot_index);
  // --input host: takes the step's batch from source_ (the wait on the loader, a host span) and writes it to the
  // staging ring's slot `slot_index` (pinned) or a fresh staging buffer (pageable); spans into `slot`.
  void stage_batch(Slot& slot, size_t first, uint32_t slot_index);
  // The transfer entry (--input host): the staged batch copied into x_batch and y_batch, with the barriers around the copy.
  void record_upload(VkCommandBuffer cmd, const Slot& slot, uint32_t slot_index) const;
  // Entry i of the plan: its dispatch (or the upload), then the timestamp that ends its interval.
  void record_entry(VkCommandBuffer cmd, Slot& slot, size_t i, const core::StepArgs& args);
  void submit(VkCommandBuffer cmd, VkFence fence);  // one vkQueueSubmit of cmd, counted
  // Waits for fence_ (the steps first..first+steps-1, at most steps_timeout_s) and resets it, counted.
  void wait_fence(long first, uint32_t steps);
  // How long `steps` queued training steps may take before the device counts as hung (vk::Device::wait): 20 times
  // what they should take, and at least kMinStepTimeoutS.
  double steps_timeout_s(uint32_t steps) const;
  static constexpr double kMinStepTimeoutS = 60;
  // A lost device's error in the user's terms: what happened, at which step, what does it.
  vk::Error explained(const vk::Error& e, long steps_done) const;
  void step_unchecked(size_t first);
  void flush_unchecked();
  // Keeps everything this trainer's commands use alive until the process ends (a hung device may still run them).
  void abandon();

  core::TrainConfig cfg_;
  const core::DataSplit& data_;
  core::ModelShape shape_;
  core::StepPlan plan_;
  // The device, the compiled kernels and the dataset on the device, shared with the other trainers made from the
  // same DeviceCache (a rebuild for a new batch size reuses them). The owners first: destroyed after the users.
  std::shared_ptr<SharedDevice> device_;
  vk::Context& ctx_;
  std::shared_ptr<const Kernels> kernels_owner_;
  const Kernels& kernels_;
  std::shared_ptr<const DeviceDataset> dataset_;
  VkDeviceSize kE_ = kF;  // bytes of a stored tensor element: 4 (fp32) or 2 (fp16, bf16)
  core::LossScalerOptions scaler_options_;  // fp16: GradScaler's defaults, init_scale from the config

  // The tensors of core::TensorLayout (destroyed before the context: members are destroyed in reverse order): a buffer
  // per tensor, except the dataset and the test order, which are dataset_'s (uploaded once per content).
  core::TensorLayout layout_;
  std::vector<Buffer> buffers_;        // per layout tensor; empty for dataset_'s
  std::vector<const Buffer*> bound_;   // per layout tensor: the buffer its bindings take
  vk::DescriptorPool pool_;
  std::vector<EntrySets> entry_sets_;  // one per plan entry
  std::vector<EntrySets> eval_sets_;   // one per entry of the evaluation pass

  std::vector<Slot> slots_;
  vk::Handle<VkFence> fence_;
  uint32_t pending_ = 0;        // steps submitted since the last flush
  long next_step_ = 0;          // global step counter (the next StepRecord::step)
  core::ExecutionCounts counts_;
  long t_ = 0;                  // optimizer updates taken (AdamW's t of the next update is t_ + 1)
  std::vector<core::StepRecord> ready_;  // records collected by an automatic flush, not yet returned
  std::unique_ptr<core::BatchSource> source_;  // --input host: the loader of the batches
  // The device's timestamp clock moved onto the host's steady clock: host seconds = timestamp seconds + this. Vulkan
  // gives no common clock without VK_EXT_calibrated_timestamps, so it is estimated from each read-back: the last
  // timestamp of the steps read back was taken before the fence wait returned, so the offset is at most (fence
  // return - last timestamp); the smallest such bound seen is kept (the two clocks run at the same rate), and a step
  // is never placed before the host submitted it. On the timeline the GPU's kernels may thus sit late by the
  // fence's wake-up time (microseconds to a millisecond); their durations are the timestamps' own.
  double clock_offset_s_ = 0;
  bool clock_offset_known_ = false;
  bool timed_ = true;  // the compute queue has timestamps (else the records carry no kernel times)
  // Untimed: when the last read-back's fence wait returned (the device idle from then on), host seconds; 0: none yet.
  // The steps of the next read-back ran between max(this, their first submission) and its fence's return.
  double last_wait_end_s_ = 0;
  double slowest_step_s_ = 0;  // the longest step read back (untimed: the longest read-back wait), seconds
  core::MemoryUsage memory_;             // bytes of the buffers made by make(), by category
  core::MemoryUsage memory_fp32_;        // the same buffers counted as fp32 training would hold them
};

}  // namespace gpu::detail
