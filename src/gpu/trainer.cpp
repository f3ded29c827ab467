// gpu::Trainer (gpu/trainer.hpp), construction and destruction: the tensors of core::TensorLayout as buffers (the
// dataset and the test order shared through the DeviceCache), every plan entry's descriptor sets, the warm-up of this
// plan's kernels, the read-back ring of command buffers and timestamp queries. The trainer's parts:
// gpu/vulkan_trainer.hpp.
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
#include "gpu/vulkan_trainer.hpp"

namespace gpu {
namespace detail {

VulkanTrainer::VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                             const std::vector<float>& init_params, DeviceCache& cache)
    : VulkanTrainer(cfg, data, core::run_plan(cfg, data), init_params, cache) {}

VulkanTrainer::VulkanTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, core::RunPlan run,
                             const std::vector<float>& init_params, DeviceCache& cache)
    : cfg_(cfg),
      data_(data),
      shape_(run.shape),
      plan_(run.plan),
      device_(cache.device(vk::ContextOptions{cfg.device, cfg.validation})),
      ctx_(device_->context),
      kernels_owner_(cache.kernels(device_, cfg.precision)),
      kernels_(*kernels_owner_),
      dataset_(cache.dataset(device_, data)),
      kE_(core::storage_bytes(cfg.precision)) {
  scaler_options_.init_scale = cfg.loss_scale_init;
  // The plan as this device runs it: matmul_backward_weight split into K slices where the device would idle
  // (gpu/gemm_config.hpp, choose_split_k); the entries' figures then count the partials' traffic. (--input host:
  // its gather_batch is the batch copied from staging, record_upload.)
  for (core::PlanEntry& e : plan_.entries) e = kernels_.with_split_k(e);
  if (init_params.size() != shape_.param_count)
    throw core::Error(core::ErrorKind::Internal, "gpu::Trainer: init_params has the wrong size");
  // A device without timestamps on its compute queue (timestampValidBits 0: allowed where
  // timestampComputeAndGraphics is false) trains untimed: its records carry no kernel times, and its name says so.
  timed_ = ctx_.info().timestamps && ctx_.timestamp_valid_bits() > 0;
  // Before anything is allocated: a model or batch past the device's limits (run::validate_for_backends refuses it
  // earlier with the same words; this covers every other maker of a trainer).
  if (const std::string problem = device_fit_problem(cfg, run, ctx_.info()); !problem.empty())
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
  // would count as training time. The GEMMs and convolutions run on their own sets (lavapipe compiles their texel
  // variants per kind of texel view), the other kernels on the warmer's scratch buffer unless the device ran them
  // before.
  std::vector<PipelineWarmer::Item> used;
  for (size_t i = 0; i < plan_.entries.size(); ++i) {
    const core::PlanEntry& e = plan_.entries[i];
    const core::Grid grid = core::kernel_def(e.op).grid;
    const bool own_sets = grid == core::Grid::Gemm || grid == core::Grid::Conv;  // their texel variants
    used.push_back({&kernels_.pipeline(e), own_sets ? entry_sets_[i].main : VK_NULL_HANDLE});
    if (e.split_k > 1) used.push_back({&kernels_.pipeline(core::Op::split_k_reduce), VK_NULL_HANDLE});
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
  // Pinned host input: one staging slot per step in flight (a slot is written again only after the fence of the
  // step that read it).
  const size_t staging = cfg_.input.host() && !cfg_.input.pageable ? static_cast<size_t>(cfg_.readback_interval) : 0;
  const core::LayoutSizes sizes{static_cast<size_t>(data_.train.count), static_cast<size_t>(data_.test.count),
                                static_cast<size_t>(cfg_.readback_interval), staging};
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
      buffers_[i] = Buffer(ctx_, layout_.bytes(i),
                           t.host_read || t.host_write ? MemoryKind::HostVisible : MemoryKind::DeviceLocal, t.name);
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
  if (source_) source_->begin_epoch(order);
}

void VulkanTrainer::set_batch_source(std::unique_ptr<core::BatchSource> source) {
  if (!cfg_.input.host()) throw core::Error(core::ErrorKind::Internal, "gpu::Trainer: a loader for device input");
  source_ = std::move(source);
}

}  // namespace detail

std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params, DeviceCache* cache) {
  if (cache) return std::make_unique<detail::VulkanTrainer>(cfg, data, init_params, *cache);
  DeviceCache own;  // the trainer keeps what it needs; nothing is shared with a later trainer
  return std::make_unique<detail::VulkanTrainer>(cfg, data, init_params, own);
}

size_t allocated_buffer_bytes(const core::Trainer& trainer) {
  const auto* vulkan = dynamic_cast<const detail::VulkanTrainer*>(&trainer);
  return vulkan ? vulkan->buffer_bytes() : 0;
}

std::optional<GemmConfig> gemm_config_of(const core::Trainer& trainer) {
  const auto* vulkan = dynamic_cast<const detail::VulkanTrainer*>(&trainer);
  if (!vulkan) return std::nullopt;
  return vulkan->gemm_config();
}

}  // namespace gpu
