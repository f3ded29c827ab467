// gpu::Trainer: a training step recorded as one command buffer of dispatches, one timestamp after each; losses and
// timestamps read back every readback_interval steps, so the GPU never waits for the host inside a step.
// The teaching toggles (core::Execution): --sync-every-step waits for each step and reads its loss at once;
// --submit-per-kernel records, submits and waits for every kernel on its own; --unfused is in the plan itself.
// Mixed precision (cfg.precision fp16/bf16): activations, gradients and the weights the kernels read are 16-bit
// buffers; the optimizer keeps fp32 master weights and state and writes the 16-bit weights copy. fp16 adds dynamic
// loss scaling entirely on the device (check_finite_grads, skip in the optimizer, update_loss_scale), so a step never
// waits for the host to decide whether to skip; the host learns the scale and the skips at read-back.
#include "gpu/trainer.hpp"

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

namespace gpu {
namespace {

using vk::Buffer;
using vk::BufferRange;
using vk::MemoryKind;

constexpr VkDeviceSize kF = sizeof(float);

class VulkanTrainer final : public core::Trainer {
 public:
  VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<float>& init_params,
                DeviceCache& cache);
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
  // Entry i of the plan: its dispatch, then the timestamp that ends its interval.
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
  // The device's timestamp clock moved onto the host's steady clock: host seconds = timestamp seconds + this. Vulkan
  // gives no common clock without VK_EXT_calibrated_timestamps, so it is estimated from each read-back: the last
  // timestamp of the steps read back was taken before the fence wait returned, so the offset is at most (fence
  // return - last timestamp); the smallest such bound seen is kept (the two clocks run at the same rate), and a step
  // is never placed before the host submitted it. On the timeline the GPU's kernels may thus sit late by the
  // fence's wake-up time (microseconds to a millisecond); their durations are the timestamps' own.
  double clock_offset_s_ = 0;
  bool clock_offset_known_ = false;
  bool timed_ = true;  // the compute queue has timestamps (else the records carry no kernel times)
  double slowest_step_s_ = 0;  // the longest step read back (untimed: the longest read-back wait), seconds
  core::MemoryUsage memory_;             // bytes of the buffers made by make(), by category
  core::MemoryUsage memory_fp32_;        // the same buffers counted as fp32 training would hold them
};

VulkanTrainer::VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                             const std::vector<float>& init_params, DeviceCache& cache)
    : cfg_(cfg),
      data_(data),
      shape_(core::model_shape(cfg, data)),
      plan_(core::build_step_plan(shape_, cfg.batch, cfg.activation, cfg.optimizer, cfg.precision,
                                  cfg.execution.unfused)),
      device_(cache.device(vk::ContextOptions{cfg.device, cfg.validation})),
      ctx_(device_->context),
      kernels_owner_(cache.kernels(device_, cfg.precision)),
      kernels_(*kernels_owner_),
      dataset_(cache.dataset(device_, data)),
      kE_(core::storage_bytes(cfg.precision)) {
  scaler_options_.init_scale = cfg.loss_scale_init;
  // The plan as this device runs it: matmul_backward_weight split into K slices where the device would idle
  // (gpu/gemm_config.hpp, choose_split_k); the entries' figures then count the partials' traffic.
  for (core::PlanEntry& e : plan_.entries) e = kernels_.with_split_k(e);
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "gpu::Trainer: init_params has the wrong size");
  // A device without timestamps on its compute queue (timestampValidBits 0: allowed where
  // timestampComputeAndGraphics is false) trains untimed: its records carry no kernel times, and its name says so.
  timed_ = ctx_.info().timestamps && ctx_.timestamp_valid_bits() > 0;
  // Before anything is allocated: a model or batch past the device's limits (run::validate_for_backends refuses it
  // earlier with the same words; this covers every other maker of a trainer).
  if (const std::string problem = device_fit_problem(cfg, data, ctx_.info()); !problem.empty())
    throw vk::Error(vk::Failure::Limit, problem);
  allocate_buffers();
  upload_params(init_params);
  // Padding between parameter tensors is never written and must stay 0 for the optimizer; the state starts at 0.
  for (core::Role r : {core::Role::Grads, core::Role::State1, core::Role::State2})
    if (has(r)) owned(r).zero(ctx_);
  if (loss_scaling()) upload_scaler(std::nullopt, 0);
  build_descriptor_sets();
  // This plan's kernels run once now (gpu/warm_up.hpp): a driver that compiles a shader at its first dispatch
  // (lavapipe: seconds for a new precision) does it while the trainer is built, not inside the first step, whose time
  // would count as training time. The GEMMs run on their own sets (lavapipe compiles per kind of texel view), the
  // other kernels on the warmer's scratch buffer unless the device ran them before.
  std::vector<PipelineWarmer::Item> used;
  for (size_t i = 0; i < plan_.entries.size(); ++i) {
    const core::PlanEntry& e = plan_.entries[i];
    const bool gemm = core::kernel_def(e.op).grid == core::Grid::Gemm;
    used.push_back({&kernels_.pipeline(e), gemm ? entry_sets_[i].main : VK_NULL_HANDLE});
    if (e.split_k > 1) used.push_back({&kernels_.split_reduce(), VK_NULL_HANDLE});
  }
  core::report_progress(std::string("compiling the ") + core::to_string(cfg_.precision) + " kernels");
  device_->warmer().warm(used);

  const uint32_t ring = static_cast<uint32_t>(cfg_.readback_interval);
  std::vector<VkCommandBuffer> cmds(ring);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = ctx_.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = ring;
  vk::check(vkAllocateCommandBuffers(ctx_.device(), &ai, cmds.data()), "vkAllocateCommandBuffers");
  for (uint32_t i = 0; i < ring; ++i) {
    Slot s;
    s.cmd = cmds[i];
    if (timed_) s.queries = vk::TimestampQueries(ctx_, static_cast<uint32_t>(plan_.entries.size()) + 1);
    slots_.push_back(std::move(s));
  }
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  vk::check(vkCreateFence(ctx_.device(), &fi, nullptr, &fence), "vkCreateFence");
  VkDevice dev = ctx_.device();
  fence_ = vk::Handle<VkFence>(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });
}

VulkanTrainer::~VulkanTrainer() {
  if (ctx_.health() == vk::Device::Health::Hung) {
    // The device did not finish in time: give it once more the time its queued steps should take. If it still has not,
    // it may write into this trainer's buffers at any moment, so they are kept, never freed (with the device, kernels
    // and dataset they belong to), instead of waiting for a device that may never answer.
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence probe = VK_NULL_HANDLE;
    bool idle = false;
    if (vkCreateFence(ctx_.device(), &fi, nullptr, &probe) == VK_SUCCESS) {
      idle = vkQueueSubmit(ctx_.queue(), 0, nullptr, probe) == VK_SUCCESS &&
             vkWaitForFences(ctx_.device(), 1, &probe, VK_TRUE, uint64_t(steps_timeout_s(pending_ + 1) * 1e9)) ==
                 VK_SUCCESS;
      if (idle) vkDestroyFence(ctx_.device(), probe, nullptr);  // else the device may still signal it: kept
    }
    if (!idle) abandon();
    return;
  }
  vkDeviceWaitIdle(ctx_.device());  // a lost device returns at once (VK_ERROR_DEVICE_LOST)
}

void VulkanTrainer::abandon() {
  struct Kept {
    std::shared_ptr<SharedDevice> device;
    std::shared_ptr<const Kernels> kernels;
    std::shared_ptr<const DeviceDataset> dataset;
    std::vector<Buffer> buffers;
    vk::DescriptorPool pool;
    std::vector<Slot> slots;
    vk::Handle<VkFence> fence;
  };
  static std::mutex mutex;
  static auto* kept = new std::vector<std::unique_ptr<Kept>>;  // reachable until exit, never destroyed
  auto k = std::make_unique<Kept>();
  k->device = device_;
  k->kernels = kernels_owner_;
  k->dataset = dataset_;
  k->buffers = std::move(buffers_);  // the layout's tensors (bound_ is not used again)
  k->pool = std::move(pool_);
  k->slots = std::move(slots_);
  k->fence = std::move(fence_);
  std::lock_guard lock(mutex);
  kept->push_back(std::move(k));
}

double VulkanTrainer::steps_timeout_s(uint32_t steps) const {
  // What a step should take: the slowest read back so far, or before any, the plan's FLOPs at 1 GFLOP/s (slower than
  // any device, lavapipe on one loaded core included).
  const double step_s = slowest_step_s_ > 0 ? slowest_step_s_ : plan_.total_flops() / 1e9;
  return std::max(kMinStepTimeoutS, 20.0 * std::max(1u, steps) * step_s);
}

void VulkanTrainer::allocate_buffers() {
  const core::LayoutSizes sizes{static_cast<size_t>(data_.train.count), static_cast<size_t>(data_.test.count),
                                static_cast<size_t>(cfg_.readback_interval)};
  layout_ = core::tensor_layout(plan_, sizes);
  buffers_.resize(layout_.tensors.size());  // sized once: bound_ points into it
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const core::TensorDesc& t = layout_.tensors[i];
    // The dataset and the test order are dataset_'s (uploaded once per content); this trainer holds them too.
    const Buffer* shared = t.role == core::Role::DataX ? (t.evaluation ? &dataset_->x_test : &dataset_->x_train)
                           : t.role == core::Role::DataY ? (t.evaluation ? &dataset_->y_test : &dataset_->y_train)
                           : t.role == core::Role::Order && t.evaluation ? &dataset_->test_order
                                                                           : nullptr;
    if (!shared)
      buffers_[i] = Buffer(ctx_, layout_.bytes(i), t.host_read ? MemoryKind::HostVisible : MemoryKind::DeviceLocal,
                           t.name);
    bound_.push_back(shared ? shared : &buffers_[i]);
  }
  memory_ = layout_.usage(true);
  memory_fp32_ = core::tensor_layout(plan_, sizes, core::Precision::FP32).usage(true);
}

size_t VulkanTrainer::buffer_bytes() const {
  size_t sum = 0;
  for (const Buffer* b : bound_) sum += static_cast<size_t>(b->size());
  return sum;
}

BufferRange VulkanTrainer::resolve(core::Role role, int l, bool evaluation) const {
  const core::TensorView v = layout_.resolve(role, l, evaluation);
  const VkDeviceSize e = core::elem_bytes(layout_.tensors[static_cast<size_t>(v.tensor)].elem, layout_.precision);
  return {bound_[static_cast<size_t>(v.tensor)], v.offset * e, v.elements * e};
}

EntrySets VulkanTrainer::make_set(vk::DescriptorPool& pool, const core::PlanEntry& e, bool evaluation,
                                  std::span<const Override> overrides) {
  const core::KernelDef& def = core::kernel_def(e.op);
  std::vector<BufferRange> ranges;
  for (const core::BindingDef& b : def.bindings) {
    if (!core::present(b.when, cfg_.precision)) continue;
    const auto o = std::find_if(overrides.begin(), overrides.end(), [&](const Override& x) { return x.first == b.role; });
    ranges.push_back(o != overrides.end() ? BufferRange{o->second} : resolve(b.role, e.layer, evaluation));
  }
  const int partials = layout_.find(core::Role::SplitKPartials);
  return kernels_.allocate_sets(pool, e, ranges, partials < 0 ? vk::BufferRange{} : vk::BufferRange{bound_[partials]});
}

void VulkanTrainer::record_pass(VkCommandBuffer cmd, const std::vector<core::PlanEntry>& pass,
                                const std::vector<EntrySets>& sets, const core::StepArgs& args) const {
  for (size_t k = 0; k < pass.size(); ++k) {
    kernels_.dispatch(cmd, pass[k], sets[k], core::kernel_def(pass[k].op).args(pass[k], args));
    vk::compute_barrier(cmd);  // RAW within the pass; after its last kernel, WAR against the next batch
  }
}

void VulkanTrainer::build_descriptor_sets() {
  uint32_t max_bindings = 0;
  for (const core::KernelDef& def : core::kernel_table())
    max_bindings = std::max(max_bindings, def.binding_count(cfg_.precision));
  // Evaluation: gather from the test set, the layers' forward kernels, per-sample results into the test-set arrays.
  const std::vector<core::PlanEntry> eval = core::forward_pass(plan_, plan_.batch, core::Pass::Evaluation);
  // One set per entry of the step and of the evaluation pass, one more for a split-K entry's reduce, and for a gather
  // over a dataset past the device's maxStorageBufferRange one per chunk of rows (Kernels::allocate_sets).
  const uint64_t row_bytes = uint64_t(shape_.inputs()) * kF;
  const uint32_t train_chunks = data_chunks(uint64_t(data_.train.count), row_bytes, ctx_.limits());
  const uint32_t test_chunks = data_chunks(uint64_t(data_.test.count), row_bytes, ctx_.limits());
  uint32_t sets = static_cast<uint32_t>(plan_.entries.size() + eval.size());
  for (const core::PlanEntry& e : plan_.entries)
    sets += e.split_k > 1 ? 1 : e.op == core::Op::gather_batch ? train_chunks - 1 : 0;
  for (const core::PlanEntry& e : eval) sets += e.op == core::Op::gather_batch ? test_chunks - 1 : 0;
  pool_ = vk::DescriptorPool(ctx_, sets, max_bindings);
  for (const auto& e : plan_.entries) entry_sets_.push_back(make_set(pool_, e, false));
  for (const auto& e : eval) eval_sets_.push_back(make_set(pool_, e, true));
}

void VulkanTrainer::begin_epoch(std::span<const uint32_t> order) {
  flush_into_ready();
  owned(core::Role::Order).upload(ctx_, order.data(), order.size_bytes());
}

void VulkanTrainer::record_step(Slot& slot, size_t first, uint32_t slot_index) {
  VkCommandBuffer cmd = slot.cmd;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk::check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  if (timed_) slot.queries.reset(cmd);
  // Across steps: the previous step's optimizer update wrote params that this step's matmul_forward reads (RAW), and
  // the previous step's backward kernels read x_batch and activations that this step overwrites (WAR).
  vk::compute_barrier(cmd);
  if (timed_) slot.queries.write(cmd, 0);
  const core::StepArgs args = core::step_args(cfg_, t_ + 1, first, slot_index);  // fp16: t on the device
  for (size_t i = 0; i < plan_.entries.size(); ++i) {
    record_entry(cmd, slot, i, args);
    // Within a step each kernel reads what an earlier one wrote (RAW): gather_batch -> x_batch -> matmul_forward
    // layer by layer -> logits -> softmax_xent -> losses (loss_reduce) and dlogits -> backward kernels -> grads ->
    // optimizer update; act_backward also overwrites (WAR) the gradient buffer that matmul_backward_data just wrote.
    // Even the independent pairs (bias_backward beside matmul_backward_weight) are serialised, so that each
    // timestamp interval belongs to exactly one kernel.
    if (i + 1 < plan_.entries.size()) vk::compute_barrier(cmd);
  }
  vk::host_read_barrier(cmd);  // RAW (device -> host): loss_history (and scale_history), read after the fence
  vk::check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

void VulkanTrainer::record_entry(VkCommandBuffer cmd, Slot& slot, size_t i, const core::StepArgs& args) {
  const core::PlanEntry& e = plan_.entries[i];
  kernels_.dispatch(cmd, e, entry_sets_[i], core::kernel_def(e.op).args(e, args));
  if (timed_) slot.queries.write(cmd, static_cast<uint32_t>(i + 1));
  ++counts_.kernels;
}

void VulkanTrainer::run_step_per_kernel(Slot& slot, size_t first, uint32_t slot_index) {
  // The launch-overhead lesson: every kernel pays a recording, a submission and a wait for the device, and the device
  // idles in between. The timestamps stay on one queue, so each kernel's interval (from the end of the previous one)
  // now includes that idle time, and the step's time is the whole of it.
  const core::StepArgs args = core::step_args(cfg_, t_ + 1, first, slot_index);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  for (size_t i = 0; i < plan_.entries.size(); ++i) {
    vk::check(vkBeginCommandBuffer(slot.cmd, &bi), "vkBeginCommandBuffer");
    if (i == 0 && timed_) {
      slot.queries.reset(slot.cmd);
      slot.queries.write(slot.cmd, 0);
    }
    // The previous kernel (or step) finished before this submission (its fence was waited for); the barrier makes its
    // writes visible to this dispatch (RAW) and orders the timestamp as in record_step.
    vk::compute_barrier(slot.cmd);
    record_entry(slot.cmd, slot, i, args);
    if (i + 1 == plan_.entries.size()) vk::host_read_barrier(slot.cmd);  // RAW (device -> host), as in record_step
    vk::check(vkEndCommandBuffer(slot.cmd), "vkEndCommandBuffer");
    submit(slot.cmd, fence_.get());
    wait_fence(next_step_, 1);
  }
}

void VulkanTrainer::submit(VkCommandBuffer cmd, VkFence fence) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  const VkResult r = vk::injected_device_lost() ? VK_ERROR_DEVICE_LOST : vkQueueSubmit(ctx_.queue(), 1, &si, fence);
  ctx_.check(r, "vkQueueSubmit (training step)");
  ++counts_.submits;
}

void VulkanTrainer::wait_fence(long first, uint32_t steps) {
  ctx_.wait(fence_.get(), steps_timeout_s(steps),
            steps == 1 ? fmt::format("training step {}", first + 1)  // counted from 1, as the progress shows them
                       : fmt::format("training steps {}..{}", first + 1, first + steps),
            true);
  VkFence fence = fence_.get();
  ctx_.check(vkResetFences(ctx_.device(), 1, &fence), "vkResetFences");
  ++counts_.host_waits;
}

vk::Error VulkanTrainer::explained(const vk::Error& e, long steps_done) const {
  if (e.failure() != vk::Failure::DeviceLost || e.hint().size()) return e;
  return vk::Error(vk::Failure::DeviceLost,
                   fmt::format("Vulkan: the GPU was lost (VK_ERROR_DEVICE_LOST) after {} training steps: its driver "
                               "reset it or it failed (Windows resets a GPU whose work takes longer than about 2 s; a "
                               "smaller batch or model shortens a step); this device is not used again",
                               steps_done),
                   e.result());
}

void VulkanTrainer::step(size_t first) {
  try {
    step_unchecked(first);
  } catch (const vk::Error& e) {
    throw explained(e, next_step_);
  }
}

void VulkanTrainer::step_unchecked(size_t first) {
  if (first + static_cast<size_t>(plan_.batch) > static_cast<size_t>(data_.train.count))
    throw core::Error(core::ErrorKind::Internal, "gpu::Trainer::step: batch runs past the training set");
  if (pending_ == slots_.size()) flush_into_ready();
  Slot& slot = slots_[pending_];
  slot.step = next_step_;
  slot.host.clear();
  const double record_start = core::monotonic_seconds();
  if (cfg_.execution.submit_per_kernel) {
    // Record, submit and wait per kernel: one host span for all of it (the waits are what this mode shows).
    run_step_per_kernel(slot, first, pending_);
    slot.host.push_back({core::HostPhase::Submit, record_start, core::monotonic_seconds()});
  } else {
    record_step(slot, first, pending_);
    const double submit_start = core::monotonic_seconds();
    submit(slot.cmd, VK_NULL_HANDLE);
    slot.host.push_back({core::HostPhase::Record, record_start, submit_start});
    slot.host.push_back({core::HostPhase::Submit, submit_start, core::monotonic_seconds()});
  }
  ++pending_;
  ++next_step_;
  ++t_;
  ++counts_.steps;
  // The `.item()` pitfall: wait for this step and read its loss before queueing the next, so that the device idles
  // while the host reads and records.
  if (cfg_.execution.sync_every_step) flush_into_ready();
}

void VulkanTrainer::flush_into_ready() {
  try {
    flush_unchecked();
  } catch (const vk::Error& e) {
    throw explained(e, next_step_ - pending_);
  }
}

void VulkanTrainer::flush_unchecked() {
  if (pending_ == 0) return;
  // A submit without command buffers signals the fence once all earlier submissions have completed.
  const double wait_start = core::monotonic_seconds();
  ctx_.check(vkQueueSubmit(ctx_.queue(), 0, nullptr, fence_.get()), "vkQueueSubmit (fence)");
  wait_fence(next_step_ - pending_, pending_);
  const double wait_end = core::monotonic_seconds();
  const auto* history = static_cast<const float*>(buffer(core::Role::LossHistory).mapped());
  const auto* scales = static_cast<const core::ScaleHistoryEntry*>(
      loss_scaling() ? buffer(core::Role::ScaleHistory).mapped() : nullptr);
  const uint32_t n = static_cast<uint32_t>(plan_.entries.size()) + 1;
  for (uint32_t s = 0; s < pending_; ++s) {
    core::StepRecord r;
    r.step = slots_[s].step;
    r.loss = history[s];
    if (scales) {
      r.loss_scale = scales[s].loss_scale;
      r.skipped = scales[s].found_inf != 0;
    }
    r.host = std::move(slots_[s].host);
    if (!timed_) {  // no kernel times; start_s stays 0 (not recorded)
      ready_.push_back(std::move(r));
      continue;
    }
    double first_ns = 0;
    std::vector<double> ns = slots_[s].queries.read_ns(ctx_, n, &first_ns);
    r.kernel_ms.resize(plan_.entries.size());
    r.kernel_start_ms.resize(plan_.entries.size());
    for (size_t i = 0; i < plan_.entries.size(); ++i) {
      r.kernel_ms[i] = (ns[i + 1] - ns[i]) * 1e-6;
      r.kernel_start_ms[i] = ns[i] * 1e-6;
    }
    r.step_ms = ns.back() * 1e-6;
    r.start_s = first_ns * 1e-9;  // on the device's clock until the offset below is added
    ready_.push_back(std::move(r));
  }
  // The device clock onto the host's (see clock_offset_s_): bounded above by the fence's return after the last step.
  core::StepRecord& last = ready_.back();
  const double upper = wait_end - (last.start_s + last.step_ms * 1e-3);
  if (timed_ && (!clock_offset_known_ || upper < clock_offset_s_)) clock_offset_s_ = upper;
  clock_offset_known_ = true;
  const size_t first_new = ready_.size() - pending_;
  for (size_t k = first_new; timed_ && k < ready_.size(); ++k) {
    core::StepRecord& r = ready_[k];
    double offset = clock_offset_s_;
    for (const core::HostSpan& h : r.host)  // never before its submission started
      if (h.phase == core::HostPhase::Submit) offset = std::max(offset, h.start_s - r.start_s);
    r.start_s += offset;
  }
  for (size_t k = first_new; k < ready_.size(); ++k)  // the slowest step so far sets the next waits' bound
    slowest_step_s_ = std::max(slowest_step_s_, timed_ ? ready_[k].step_ms * 1e-3 : wait_end - wait_start);
  last.host.push_back({core::HostPhase::FenceWait, wait_start, wait_end});
  last.host.push_back({core::HostPhase::ReadBack, wait_end, core::monotonic_seconds()});
  pending_ = 0;
}

std::vector<core::StepRecord> VulkanTrainer::flush() {
  flush_into_ready();
  return std::exchange(ready_, {});
}

core::EvalResult VulkanTrainer::evaluate() {
  flush_into_ready();
  const long N = data_.test.count, B = plan_.batch;
  core::StepArgs args = core::step_args(cfg_, t_ + 1);
  args.evaluation = true;
  ctx_.run_one_shot([&](VkCommandBuffer cmd) {
    vk::compute_barrier(cmd);  // RAW: the last training step's update wrote the params the forward pass reads
    for (long start = 0; start < N; start += B) {  // the last batch may be partial
      args.first = args.out_offset = static_cast<uint32_t>(start);
      record_pass(cmd, core::forward_pass(plan_, std::min(B, N - start), core::Pass::Evaluation), eval_sets_, args);
    }
  });
  std::vector<float> losses(static_cast<size_t>(N));
  std::vector<int32_t> correct(static_cast<size_t>(N));
  buffer(core::Role::Losses, -1, true).download(ctx_, losses.data(), losses.size() * kF);
  buffer(core::Role::Correct, -1, true).download(ctx_, correct.data(), correct.size() * 4);
  double loss = 0, right = 0;
  for (long i = 0; i < N; ++i) {
    loss += losses[i];
    right += correct[i];
  }
  return {N ? loss / N : 0.0, N ? right / N : 0.0};
}

std::vector<int32_t> VulkanTrainer::predict(std::span<const float> x, size_t count) {
  flush_into_ready();
  const long F = shape_.inputs(), B = plan_.batch;
  if (x.size() != count * static_cast<size_t>(F))
    throw core::Error(core::ErrorKind::Internal, "gpu trainer: predict() needs count x features inputs");
  if (count == 0) return {};
  // Short-lived buffers (not part of memory_usage()): the points as a dataset of their own, read through the same
  // gather_batch and forward kernels as evaluation, and the classes of every chunk copied out after its pass.
  Buffer points(ctx_, std::max<VkDeviceSize>(x.size_bytes(), 16), MemoryKind::DeviceLocal, "predict_points");
  points.upload(ctx_, x.data(), x.size_bytes());
  std::vector<uint32_t> iota(count);
  for (size_t i = 0; i < count; ++i) iota[i] = static_cast<uint32_t>(i);
  Buffer order(ctx_, count * 4, MemoryKind::DeviceLocal, "predict_order");
  order.upload(ctx_, iota.data(), count * 4);
  Buffer labels(ctx_, count * 4, MemoryKind::DeviceLocal, "predict_labels");
  labels.zero(ctx_);
  Buffer classes(ctx_, count * 4, MemoryKind::HostVisible, "predict_classes");
  const std::vector<core::PlanEntry> full = core::forward_pass(plan_, B, core::Pass::Prediction);
  // One set per entry, the gather one per chunk of points past maxStorageBufferRange (Kernels::allocate_sets).
  const uint32_t chunks = data_chunks(count, uint64_t(F) * kF, ctx_.limits());
  vk::DescriptorPool pool(ctx_, static_cast<uint32_t>(full.size()) + chunks - 1, 8);
  const Override points_data[] = {{core::Role::DataX, &points}, {core::Role::DataY, &labels}, {core::Role::Order, &order}};
  std::vector<EntrySets> sets;
  for (const core::PlanEntry& e : full) sets.push_back(make_set(pool, e, true, points_data));
  core::StepArgs args = core::step_args(cfg_, t_ + 1);
  args.evaluation = true;
  const BufferRange out = resolve(core::Role::Predictions, -1, true);
  ctx_.run_one_shot([&](VkCommandBuffer cmd) {
    vk::compute_barrier(cmd);  // RAW: the last step's update wrote the weights the forward pass reads
    for (size_t start = 0; start < count; start += static_cast<size_t>(B)) {
      const long n = static_cast<long>(std::min<size_t>(static_cast<size_t>(B), count - start));
      args.first = static_cast<uint32_t>(start);
      record_pass(cmd, n == B ? full : core::forward_pass(plan_, n, core::Pass::Prediction), sets, args);
      // The classes (n) out to their rows; the next chunk's kernels overwrite them only after the copy (WAR).
      VkMemoryBarrier to_copy{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      to_copy.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      to_copy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &to_copy, 0,
                           nullptr, 0, nullptr);
      const VkBufferCopy region{out.offset, start * 4, VkDeviceSize(n) * 4};
      vkCmdCopyBuffer(cmd, out.buffer->handle(), classes.handle(), 1, &region);
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 0,
                           nullptr, 0, nullptr);
    }
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0,
                         nullptr);
  });
  const auto* first = static_cast<const int32_t*>(classes.mapped());
  return std::vector<int32_t>(first, first + count);
}

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
  device.beta1_pow = static_cast<float>(std::pow(double(cfg_.beta1), double(optimizer_steps)));
  device.beta2_pow = static_cast<float>(std::pow(double(cfg_.beta2), double(optimizer_steps)));
  owned(core::Role::Scaler).upload(ctx_, &device, sizeof device);
  t_ = optimizer_steps;
}

}  // namespace

std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params, DeviceCache* cache) {
  if (cache) return std::make_unique<VulkanTrainer>(cfg, data, init_params, *cache);
  DeviceCache own;  // the trainer keeps what it needs; nothing is shared with a later trainer
  return std::make_unique<VulkanTrainer>(cfg, data, init_params, own);
}

size_t allocated_buffer_bytes(const core::Trainer& trainer) {
  const auto* vulkan = dynamic_cast<const VulkanTrainer*>(&trainer);
  return vulkan ? vulkan->buffer_bytes() : 0;
}

std::optional<GemmConfig> gemm_config_of(const core::Trainer& trainer) {
  const auto* vulkan = dynamic_cast<const VulkanTrainer*>(&trainer);
  if (!vulkan) return std::nullopt;
  return vulkan->gemm_config();
}

}  // namespace gpu
