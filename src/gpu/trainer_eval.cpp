// gpu::Trainer, evaluation and prediction: core::forward_pass recorded batch by batch into one command buffer;
// evaluation on the test set with the descriptor sets made at construction, prediction on the caller's points with
// sets made for them.
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

void VulkanTrainer::record_pass(VkCommandBuffer cmd, const std::vector<core::PlanEntry>& pass,
                                const std::vector<EntrySets>& sets, const core::StepArgs& args) const {
  for (size_t k = 0; k < pass.size(); ++k) {
    kernels_.dispatch(cmd, pass[k], sets[k], core::kernel_def(pass[k].op).args(pass[k], args));
    vk::compute_barrier(cmd);  // RAW within the pass; after its last kernel, WAR against the next batch
  }
}

core::EvalResult VulkanTrainer::evaluate() {
  flush_into_ready();
  const long N = data_.test.count, B = plan_.batch;
  core::StepArgs args = core::step_args(cfg_, t_ + 1);
  args.evaluation = true;
  ctx_.run_one_shot([&](VkCommandBuffer cmd) {
    vk::compute_barrier(cmd);  // RAW: the last training step's update wrote the params the forward pass reads
    for (long start = 0; start < N; start += B) {  // the last batch may be partial
      args.first = static_cast<uint32_t>(start);
      args.out_offset = static_cast<uint32_t>(start * shape_.positions);  // a transformer's: every position
      record_pass(cmd, core::forward_pass(plan_, std::min(B, N - start), core::Pass::Evaluation), eval_sets_, args);
    }
  });
  const size_t rows = static_cast<size_t>(N) * static_cast<size_t>(shape_.positions);
  std::vector<float> losses(rows);
  std::vector<int32_t> correct(rows);
  buffer(core::Role::Losses, -1, true).download(ctx_, losses.data(), losses.size() * kF);
  buffer(core::Role::Correct, -1, true).download(ctx_, correct.data(), correct.size() * 4);
  return core::evaluation_result(data_.test, losses, correct);
}

std::vector<int32_t> VulkanTrainer::predict(std::span<const float> x, size_t count) {
  flush_into_ready();
  // A transformer's: count sequences of T token ids in, a class (the next token) per position out.
  const size_t P = static_cast<size_t>(shape_.positions);
  const long F = shape_.inputs() * long(P), B = plan_.batch;
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
  Buffer labels(ctx_, count * P * 4, MemoryKind::DeviceLocal, "predict_labels");
  labels.zero(ctx_);
  Buffer classes(ctx_, count * P * 4, MemoryKind::HostVisible, "predict_classes");
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
      const VkBufferCopy region{out.offset, start * P * 4, VkDeviceSize(n) * P * 4};
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
  return std::vector<int32_t>(first, first + count * P);
}

}  // namespace gpu::detail
