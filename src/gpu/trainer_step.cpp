// gpu::Trainer, the training step: recorded as one command buffer of dispatches with a timestamp after each (or, with
// --submit-per-kernel, submitted and waited for kernel by kernel) and queued without waiting; every readback_interval
// steps (every step with --sync-every-step) one fence wait, then the losses, the loss scales and skips and the
// kernels' timestamps read back and moved onto the host's clock.
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

namespace gpu::detail {

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
  if (e.transfer()) {  // a transfer, timed as one: its timestamp after the copy stage
    record_upload(cmd, slot, args.slot);
    if (timed_) slot.queries.write(cmd, static_cast<uint32_t>(i + 1), VK_PIPELINE_STAGE_TRANSFER_BIT);
    return;
  }
  kernels_.dispatch(cmd, e, entry_sets_[i], core::kernel_def(e.op).args(e, args));
  if (timed_) slot.queries.write(cmd, static_cast<uint32_t>(i + 1));
  ++counts_.kernels;
}

void VulkanTrainer::stage_batch(Slot& slot, size_t first, uint32_t slot_index) {
  const double wait_start = core::monotonic_seconds();
  core::HostBatch batch = source_->take(first);
  const double upload_start = core::monotonic_seconds();
  slot.host.push_back({core::HostPhase::LoaderWait, wait_start, upload_start});
  slot.loader = std::move(batch.spans);
  const VkDeviceSize x_bytes = batch.x.size_bytes(), y_bytes = batch.y.size_bytes();
  if (cfg_.input.pageable) {
    // As a copy from pageable memory: the batch goes through staging memory made for this step alone (freed when
    // the slot is used again, after its fence).
    slot.pageable = Buffer(ctx_, x_bytes + y_bytes, MemoryKind::HostVisible, "pageable staging");
    std::memcpy(slot.pageable.mapped(), batch.x.data(), x_bytes);
    std::memcpy(static_cast<std::byte*>(slot.pageable.mapped()) + x_bytes, batch.y.data(), y_bytes);
  } else {
    // The ring's slot: the step that last read it finished before this slot came round again (its fence was waited
    // for), so the host may overwrite it.
    std::memcpy(static_cast<std::byte*>(owned(core::Role::StagingX).mapped()) + slot_index * x_bytes,
                batch.x.data(), x_bytes);
    std::memcpy(static_cast<std::byte*>(owned(core::Role::StagingY).mapped()) + slot_index * y_bytes,
                batch.y.data(), y_bytes);
  }
  slot.host.push_back({core::HostPhase::Upload, upload_start, core::monotonic_seconds()});
}

void VulkanTrainer::record_upload(VkCommandBuffer cmd, const Slot& slot, uint32_t slot_index) const {
  const VkDeviceSize x_bytes = VkDeviceSize(plan_.batch) * VkDeviceSize(shape_.inputs()) * kE_;
  const VkDeviceSize y_bytes = VkDeviceSize(plan_.batch) * sizeof(int32_t);
  // WAR: the previous step's kernels read x_batch and y_batch (and their sets' other buffers) before this copy
  // overwrites them. The host's writes to the staging memory need no barrier: vkQueueSubmit makes the host writes
  // before it visible to the submitted commands (Vulkan spec, "Host Write Ordering Guarantees"; the memory is
  // host-coherent).
  VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  before.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0,
                       nullptr, 0, nullptr);
  const VkBuffer x_batch = buffer(core::Role::XBatch).handle(), y_batch = buffer(core::Role::YBatch).handle();
  if (cfg_.input.pageable) {
    const VkBufferCopy x{0, 0, x_bytes}, y{x_bytes, 0, y_bytes};
    vkCmdCopyBuffer(cmd, slot.pageable.handle(), x_batch, 1, &x);
    vkCmdCopyBuffer(cmd, slot.pageable.handle(), y_batch, 1, &y);
  } else {
    const VkBufferCopy x{slot_index * x_bytes, 0, x_bytes}, y{slot_index * y_bytes, 0, y_bytes};
    vkCmdCopyBuffer(cmd, buffer(core::Role::StagingX).handle(), x_batch, 1, &x);
    vkCmdCopyBuffer(cmd, buffer(core::Role::StagingY).handle(), y_batch, 1, &y);
  }
  // RAW: the copy's writes visible to the kernels that read the batch (matmul_forward L1, softmax_xent's labels).
  VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0,
                       nullptr, 0, nullptr);
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
  if (cfg_.input.host() && !source_)
    throw core::Error(core::ErrorKind::Internal, "gpu::Trainer: --input host without a loader");
  // A copy from pageable memory waits for the queue first (CUDA's cudaMemcpy from pageable memory synchronises
  // the stream before it copies), so the device drains between steps.
  if (pending_ == slots_.size() || (source_ && cfg_.input.pageable)) flush_into_ready();
  Slot& slot = slots_[pending_];
  slot.step = next_step_;
  slot.host.clear();
  slot.loader.clear();
  if (source_) stage_batch(slot, first, pending_);
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
  // Untimed (no timestamps): the steps read back here ran one after another from their first submission (or the
  // previous read-back's return, when the device was still busy then) to this fence's return; each gets an equal
  // share of that wall-clock span as its step time (never 0: step times, samples/s and the run's wall time come
  // from it; the kernels' times stay unavailable).
  double untimed_begin_s = wait_start, untimed_share_s = 0;
  if (!timed_) {
    for (const core::HostSpan& h : slots_[0].host)
      if (h.phase == core::HostPhase::Submit) untimed_begin_s = std::min(untimed_begin_s, h.start_s);
    untimed_begin_s = std::max(untimed_begin_s, last_wait_end_s_);
    untimed_share_s = std::max(wait_end - untimed_begin_s, 0.0) / static_cast<double>(pending_);
    last_wait_end_s_ = wait_end;
  }
  for (uint32_t s = 0; s < pending_; ++s) {
    core::StepRecord r;
    r.step = slots_[s].step;
    r.loss = history[s];
    if (scales) {
      r.loss_scale = scales[s].loss_scale;
      r.skipped = scales[s].found_inf != 0;
    }
    r.host = std::move(slots_[s].host);
    r.loader = std::move(slots_[s].loader);
    if (!timed_) {  // no kernel times: the step's wall-clock share (above)
      r.step_ms = untimed_share_s * 1e3;
      r.start_s = untimed_begin_s + untimed_share_s * static_cast<double>(s);
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

}  // namespace gpu::detail
