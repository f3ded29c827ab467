// Running each pipeline once, so that a driver that compiles at the first dispatch does so before training needs it.
#include "gpu/warm_up.hpp"

#include <vector>

#include "core/error.hpp"
#include "core/kernel_table.hpp"
#include "gpu/kernels.hpp"
#include "vk/handle.hpp"

namespace gpu {

PipelineWarmer::PipelineWarmer(vk::Context& ctx)
    : ctx_(&ctx), scratch_(ctx, kScratchBytes, vk::MemoryKind::DeviceLocal, "warm_up_scratch") {
  scratch_.zero(ctx);
}

void PipelineWarmer::warm(std::span<const Item> items) {
  // What to dispatch: each item with its own set, or on scratch sets. lavapipe compiles a texel binding's kernel per
  // kind of view (a size that is a power of two or not), so a pipeline with texel bindings runs on both kinds.
  struct Dispatch {
    const vk::ComputePipeline* pipeline;
    VkDescriptorSet set;
    bool scratch;           // on scratch sets (not the item's own)
    unsigned powers = 0;    // scratch: bit j set: the j-th texel binding's view holds a power of two of texels
  };
  std::vector<Dispatch> todo;
  uint32_t max_bindings = 1, scratch_sets = 0;
  for (const Item& item : items) {
    const vk::ComputePipeline* p = item.pipeline;
    if (!p || p->pipeline() == VK_NULL_HANDLE) continue;
    if (item.set != VK_NULL_HANDLE) {
      todo.push_back({p, item.set, false});
      continue;
    }
    bool listed = warmed_.count(p->pipeline()) > 0;
    for (const Dispatch& d : todo) listed = listed || (d.pipeline->pipeline() == p->pipeline() && d.scratch);
    if (listed) continue;
    unsigned texel = 0;
    for (uint32_t b = 0; b < p->bindings(); ++b)
      texel += p->binding_kind(b).type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER ? 1 : 0;
    // Every combination of the texel bindings' kinds of view (a GEMM has two operands: four variants).
    for (unsigned powers = 0; powers < (1u << texel); ++powers) todo.push_back({p, VK_NULL_HANDLE, true, powers});
    scratch_sets += 1u << texel;
    max_bindings = std::max(max_bindings, p->bindings());
  }
  if (todo.empty()) return;
  vk::DescriptorPool pool;
  if (scratch_sets > 0) pool = vk::DescriptorPool(*ctx_, scratch_sets, max_bindings);
  for (Dispatch& d : todo) {
    if (!d.scratch) continue;
    // 48 bytes short of 64 KiB: a texel view of it holds 4093, 8186 or 16372 texels, none a power of two; the whole
    // 64 KiB holds a power of two of them.
    std::vector<vk::BufferRange> ranges(d.pipeline->bindings(), vk::BufferRange{&scratch_, 0, kScratchBytes - 48});
    unsigned j = 0;
    for (uint32_t b = 0; b < d.pipeline->bindings(); ++b) {
      if (d.pipeline->binding_kind(b).type != VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) continue;
      if ((d.powers >> j) & 1u) ranges[b].range = kScratchBytes;
      ++j;
    }
    d.set = pool.allocate(*ctx_, *d.pipeline, ranges);
  }
  const std::vector<uint32_t> zeros(64, 0);  // push constants: every size 0 (a params struct is at most 128 bytes)
  ctx_->run_one_shot([&](VkCommandBuffer cmd) {
    for (const Dispatch& d : todo) {
      if (d.pipeline->push_constant_bytes() > zeros.size() * sizeof(uint32_t))
        throw core::Error(core::ErrorKind::Internal, d.pipeline->kernel() + ": push constants larger than 256 bytes");
      vk::record_dispatch(cmd, *d.pipeline, d.set, zeros.data(), 1);
      // WAW on the scratch buffer: the kernels write it in turn (what they write is never read). A trainer's own
      // buffers are not written (sizes 0), but its next commands are ordered after these anyway by the submit.
      vk::compute_barrier(cmd);
    }
  });
  for (const Dispatch& d : todo) warmed_.insert(d.pipeline->pipeline());
}

std::vector<const vk::ComputePipeline*> every_pipeline(const Kernels& kernels) {
  std::vector<const vk::ComputePipeline*> out;
  // The convolutions first (compiled last): only a CNN runs them, and the model can be switched live.
  const GemmConfig& config = kernels.gemm_config();
  // Every variant of a GEMM-shaped kernel that this configuration can pick, from its record: 4-wide loads where the
  // configuration has them (a convolution's only on the Texel path: its tiled loads are scalar), split-K where the
  // kernel may split.
  const auto add_variants = [&](const core::KernelDef& def) {
    for (bool vec4 : {false, true}) {
      if (vec4 && (!config.vector_loads || (def.grid == core::Grid::Conv && config.path != GemmPath::Texel))) continue;
      for (bool split : {false, true})
        if (!split || def.gemm.split_k != core::SplitK::None)
          out.push_back(&kernels.gemm_pipeline(def.op, GemmVariant{config.path, vec4, split}));
    }
  };
  for (const core::KernelDef& def : core::kernel_table())
    if (def.grid == core::Grid::Conv && def.exists_in(kernels.precision())) add_variants(def);
  for (const core::KernelDef& def : core::kernel_table()) {
    if (!def.exists_in(kernels.precision()) || def.grid == core::Grid::Conv) continue;
    if (def.grid == core::Grid::Gemm)
      add_variants(def);
    else
      out.push_back(&kernels.pipeline(def.op));  // split_k_reduce among them
  }
  return out;
}

}  // namespace gpu
