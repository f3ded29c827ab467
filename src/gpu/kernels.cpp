// Every kernel's pipeline from the kernel table, and the workgroup counts and push constants of one dispatch.
#include "gpu/kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <utility>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gpu {

namespace {
uint32_t div_up(uint64_t n, uint32_t d) { return static_cast<uint32_t>((n + d - 1) / d); }
bool splits(const core::KernelDef& def) { return def.gemm.split_k != core::SplitK::None; }
// Whether entry e runs as a split GEMM pass and its reduce (split_k_reduce's own entry uses split_k for its slices).
bool runs_split(const core::PlanEntry& e) { return e.split_k > 1 && splits(core::kernel_def(e.op)); }
}  // namespace

bool precision_supported(const vk::DeviceInfo& device, core::Precision precision, std::string* why) {
  if (precision == core::Precision::FP32 || device.storage_16bit) return true;
  if (why)
    *why = std::string(core::to_string(precision)) +
           " needs 16-bit storage buffers (VK_KHR_16bit_storage storageBuffer16BitAccess), which " + device.name +
           " does not support; use fp32";
  return false;
}

std::vector<GemmConfig> variants_to_test(const core::KernelDef& def, const vk::Device& device,
                                         core::Precision precision) {
  if (def.grid == core::Grid::Conv) {
    const GemmConfig chosen = choose_gemm_config(device, precision);
    std::vector<GemmConfig> out{chosen};
    if (precision != core::Precision::FP32) {  // the default, and backward weight split-K on the default's path
      if (splits(def))
        for (const GemmConfig& c : gemm_configs_to_test(device, precision))
          if (c.path == chosen.path && c.split_k > 1) {
            out.push_back(c);
            break;
          }
      return out;
    }
    // One configuration per way the convolutions run: the Texel path, each Tiled tiling (the 4-wide texels or not
    // follow each case's channels), and for conv2d_backward_weight split-K on each path.
    const auto runs_as = [&](const GemmConfig& c) {
      return std::tuple{c.path, c.path == GemmPath::Texel ? kConvTexelTiles : conv_tiles(c, device),
                        splits(def) && c.split_k > 1};
    };
    for (const GemmConfig& c : gemm_configs_to_test(device, precision)) {
      bool seen = false;
      for (const GemmConfig& o : out) seen = seen || runs_as(o) == runs_as(c);
      if (!seen) out.push_back(c);
    }
    return out;
  }
  if (def.grid != core::Grid::Gemm) return {choose_gemm_config(device, precision)};
  std::vector<GemmConfig> out = gemm_configs_to_test(device, precision);
  if (!splits(def))  // the forced split-K configurations would run it unsplit: nothing new
    std::erase_if(out, [](const GemmConfig& c) { return c.split_k > 1; });
  if (precision == core::Precision::FP32) return out;
  // 16-bit storage changes a GEMM's loads and stores (shaders/common/dtype.glsl), not a tiling's index arithmetic,
  // which fp32 runs on every configuration: in 16-bit the default configuration, the other path with the fewest
  // outputs per invocation, and split-K. (An 8x8-per-invocation tiling takes lavapipe seconds to compile in each
  // 16-bit format, which the parity test would pay in CI for no case that fp32 does not already reach.)
  const GemmConfig chosen = choose_gemm_config(device, precision);
  const GemmConfig* other = nullptr;
  for (const GemmConfig& c : out)
    if (c.path != chosen.path && c.vector_loads && c.split_k <= 1 &&
        (!other || c.tiles.thread_m * c.tiles.thread_n < other->tiles.thread_m * other->tiles.thread_n))
      other = &c;
  const GemmConfig kept_other = other ? *other : chosen;
  std::erase_if(out, [&](const GemmConfig& c) { return !(c == chosen || c == kept_other || c.split_k > 1); });
  return out;
}

uint32_t workgroup_size(uint32_t preferred, const vk::DeviceLimits& limits) {
  const uint32_t most = std::min({preferred, limits.max_workgroup_invocations, limits.max_workgroup_size[0]});
  uint32_t size = 1;
  while (size * 2 <= most) size *= 2;
  return size;
}

uint32_t workgroup_size(const core::KernelDef& def, const vk::DeviceLimits& limits) {
  return workgroup_size(def.local_size, limits);
}

uint64_t rows_per_binding(uint64_t row_bytes, const vk::DeviceLimits& limits) {
  const uint64_t align = std::max<uint64_t>(16, limits.min_storage_buffer_offset_alignment);
  const uint64_t step = align / std::gcd(row_bytes, align);  // rows per aligned start
  const uint64_t rows = limits.max_storage_buffer_range / row_bytes / step * step;
  if (row_bytes == 0 || rows == 0)
    throw vk::Error(vk::Failure::Limit,
                    fmt::format("Vulkan: a dataset row of {} bytes cannot be bound in chunks aligned to {} bytes: this "
                                "device binds at most {} bytes (maxStorageBufferRange)",
                                row_bytes, align, limits.max_storage_buffer_range));
  return rows;
}

uint32_t data_chunks(uint64_t rows, uint64_t row_bytes, const vk::DeviceLimits& limits) {
  if (rows * row_bytes <= limits.max_storage_buffer_range) return 1;
  const uint64_t per = rows_per_binding(row_bytes, limits);
  return static_cast<uint32_t>((rows + per - 1) / per);
}

VkDeviceSize split_k_partials_bytes(const core::PlanEntry& e) {
  return runs_split(e) ? VkDeviceSize(e.split_k) * core::split_output_elements(e) * sizeof(float) : 0;
}

Kernels::Kernels(vk::Context& ctx, std::optional<GemmConfig> gemm, core::Precision precision,
                 VkPipelineCache cache, std::optional<core::Op> only)
    : ctx_(&ctx), gemm_(gemm ? *gemm : choose_gemm_config(ctx, precision)), precision_(precision), cache_(cache),
      conv_tiles_(gpu::conv_tiles(gemm_, ctx)) {
  if (std::string why; !precision_supported(ctx.info(), precision, &why))
    throw core::Error(core::ErrorKind::Vulkan, why);
  if (!gemm_config_fits(gemm_, ctx, precision))
    throw core::Error(core::ErrorKind::Internal, ctx.info().name + " cannot run the GEMM configuration " + gemm_.name());
  // Variant names as in shaders/shaders.cmake: "<kernel>", "<kernel>_fp16", "<kernel>_bf16".
  suffix_ = precision == core::Precision::FP32 ? "" : std::string("_") + core::to_string(precision);
  // Every kernel that is not a GEMM has its local size as specialization constant 0 (local_size_x_id = 0), and the
  // shared memory and least local size its record says.
  // With `only`, that kernel's pipelines, and split_k_reduce where `only` may run split-K.
  const auto wanted = [&](const core::KernelDef& def) {
    return !only || def.op == *only || (def.op == core::Op::split_k_reduce && splits(core::kernel_def(*only)));
  };
  for (const core::KernelDef& def : core::kernel_table()) {
    pipelines_.emplace_back();
    const bool tiled = def.gemm_shaped();  // made on first use
    local_sizes_.push_back(tiled ? 0 : workgroup_size(def, ctx.limits()));
    if (!def.exists_in(precision) || tiled || !wanted(def)) continue;
    const uint32_t local = local_sizes_.back();
    if (local < def.min_local_size)  // only a profile below Vulkan's minimum of 128
      throw vk::Error(vk::Failure::Limit,
                      fmt::format("{}: {} needs workgroups of at least {} invocations; this device allows {} "
                                  "(maxComputeWorkGroupInvocations, maxComputeWorkGroupSize[0])",
                                  ctx.info().name, def.name, def.min_local_size, local));
    const uint32_t shared = local * def.shared_floats_per_invocation * 4;
    const std::array<uint32_t, 1> spec{local};
    pipelines_.back() = vk::ComputePipeline(ctx, def.name + suffix_, def.binding_count(precision), def.params_bytes,
                                            {{local, 1, 1}, shared}, spec, {}, cache);
  }
}

core::PlanEntry Kernels::with_split_k(const core::PlanEntry& e) const {
  const core::KernelDef& def = core::kernel_def(e.op);
  if (!splits(def)) return e;
  return core::with_split_k(e, choose_split_k(gemm_, tiles(e.op, gemm_variant(e)), e, ctx_->info()), precision_);
}

EntrySets Kernels::allocate_sets(vk::DescriptorPool& pool, const core::PlanEntry& e,
                                 std::span<const vk::BufferRange> ranges, vk::BufferRange partials) const {
  if (e.op == core::Op::gather_batch) {
    // The dataset (DataX: rows of e.C fp32 values) in chunks of whole rows where the device cannot bind it whole
    // (Fashion-MNIST's 188 MB training set against lavapipe's 128 MiB maxStorageBufferRange). The alternative, one
    // descriptor array of ranges indexed in the shader, needs shaderStorageBufferArrayDynamicIndexing; a dispatch per
    // chunk needs nothing, costs one more pass over the batch's order per chunk, and is one dispatch on a device
    // whose range holds the dataset (the 4 GiB of desktop GPUs).
    const std::span<const core::BindingDef> defs = core::kernel_def(e.op).bindings;
    const size_t x = static_cast<size_t>(std::find_if(defs.begin(), defs.end(), [](const core::BindingDef& b) {
                                           return b.role == core::Role::DataX;
                                         }) - defs.begin());
    const vk::BufferRange& data = ranges[x];
    const uint64_t bytes = data.range ? data.range : data.buffer->size() - data.offset;
    const uint64_t row_bytes = uint64_t(std::max(e.C, 1L)) * sizeof(float);
    if (bytes > ctx_->limits().max_storage_buffer_range) {
      const uint64_t rows = bytes / row_bytes, per = rows_per_binding(row_bytes, ctx_->limits());
      EntrySets sets;
      std::vector<vk::BufferRange> chunk(ranges.begin(), ranges.end());
      for (uint64_t begin = 0; begin < rows; begin += per) {
        const uint64_t end = std::min(rows, begin + per);
        chunk[x] = {data.buffer, data.offset + begin * row_bytes, (end - begin) * row_bytes};
        sets.chunks.push_back({pool.allocate(*ctx_, pipeline(e), chunk), static_cast<uint32_t>(begin),
                               static_cast<uint32_t>(end)});
      }
      return sets;
    }
  }
  if (!runs_split(e)) return {pool.allocate(*ctx_, pipeline(e), ranges)};
  if (!partials.buffer || partials.buffer->size() < partials.offset + split_k_partials_bytes(e) || ranges.empty())
    throw core::Error(core::ErrorKind::Internal, e.label() + ": split-K without a partials buffer of its size");
  // The GEMM pass writes the partials where the unsplit kernel writes dweight (binding 0); the reduce reads them.
  std::vector<vk::BufferRange> gemm(ranges.begin(), ranges.end());
  gemm[0] = {partials.buffer, partials.offset, split_k_partials_bytes(e)};
  const std::array<vk::BufferRange, 2> reduce{ranges[0], gemm[0]};  // split_k_reduce's dweight, partials
  return {pool.allocate(*ctx_, pipeline(e), gemm), pool.allocate(*ctx_, pipeline(core::Op::split_k_reduce), reduce)};
}

GemmVariant Kernels::gemm_variant(const core::PlanEntry& e) const {
  return gpu::gemm_variant(gemm_, e, ctx_->limits());
}

const GemmTiles& Kernels::tiles(core::Op op, GemmVariant v) const {
  if (core::kernel_def(op).grid != core::Grid::Conv) return gemm_.tiles;
  return v.path == GemmPath::Texel ? conv_texel_tiles_ : conv_tiles_;
}

const vk::ComputePipeline& Kernels::pipeline(const core::PlanEntry& e) const {
  if (core::kernel_def(e.op).gemm_shaped()) return gemm_pipeline(e.op, gemm_variant(e));
  return pipeline(e.op);
}

const vk::ComputePipeline& Kernels::gemm_pipeline(core::Op op, GemmVariant v) const {
  const core::KernelDef& def = core::kernel_def(op);
  if (!def.gemm_shaped())
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + " is not a GEMM or convolution");
  if (v.split && !splits(def))
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + " never runs split-K (its record)");
  auto [it, inserted] = gemm_pipelines_.try_emplace({op, v.path, v.vec4, v.split});
  if (inserted) {
    try {
      const uint32_t bindings = def.binding_count(precision_);
      const bool texel = v.path == GemmPath::Texel;
      const GemmTiles& t = tiles(op, v);
      // Invocations along n in local x, except the texel convolutions', along m (texel_block.glsl, TEXEL_LANES_M).
      const bool lanes_m = texel && def.gemm.texel_lanes_along_m;
      const uint32_t along_n = t.tile_n / t.thread_n, along_m = t.tile_m / t.thread_m;
      const vk::Workgroup workgroup{{lanes_m ? along_m : along_n, lanes_m ? along_n : along_m, 1},
                                    texel ? 0 : t.shared_bytes()};
      std::array<uint32_t, 8> spec = gemm_spec_constants(t, v);
      if (lanes_m) std::swap(spec[5], spec[6]);  // local_size_x_id = 5, local_size_y_id = 6
      // "<kernel>[_splitk][_texel]<suffix>" (shaders/shaders.cmake).
      const std::string name = std::string(def.name) + (v.split ? "_splitk" : "") + (texel ? "_texel" : "") + suffix_;
      it->second = vk::ComputePipeline(*ctx_, name, bindings, def.params_bytes, workgroup, spec,
                                       gemm_binding_kinds(op, v, precision_, bindings), cache_);
    } catch (...) {
      gemm_pipelines_.erase(it);
      throw;
    }
  }
  return it->second;
}

const vk::ComputePipeline& Kernels::pipeline(core::Op op) const {
  if (core::kernel_def(op).gemm_shaped())
    throw core::Error(core::ErrorKind::Internal, std::string(core::kernel_name(op)) +
                                                     ": a GEMM's or convolution's pipeline depends on the shape; ask "
                                                     "for an entry's");
  const vk::ComputePipeline& p = pipelines_.at(static_cast<size_t>(op));
  if (p.pipeline() == VK_NULL_HANDLE)
    throw core::Error(core::ErrorKind::Internal, std::string(core::kernel_name(op)) + " has no " +
                                                     core::to_string(precision_) + " variant");
  return p;
}

std::array<uint32_t, 3> Kernels::groups(const core::PlanEntry& e) const {
  const core::KernelDef& def = core::kernel_def(e.op);
  const std::array<uint64_t, 2> size = def.grid_size(e);
  switch (def.grid) {
    case core::Grid::Elements:  // grid-stride loops: the group count may stay under maxComputeWorkGroupCount[0]
      return {std::clamp<uint32_t>(div_up(size[0], local_sizes_.at(size_t(e.op))), 1u,
                                   ctx_->limits().max_workgroup_count[0]),
              1, 1};
    case core::Grid::Rows: return {std::max(1u, div_up(size[0], local_sizes_.at(size_t(e.op)))), 1, 1};
    case core::Grid::Gemm:
      return {div_up(size[1], gemm_.tiles.tile_n), div_up(size[0], gemm_.tiles.tile_m), e.split_k > 1 ? e.split_k : 1};
    case core::Grid::Conv: {
      const GemmTiles& t = tiles(e.op, gemm_variant(e));
      const std::array<uint32_t, 2> yz = fold_rows((size[0] + t.tile_m - 1) / t.tile_m, ctx_->limits());
      if (e.split_k <= 1) return {div_up(size[1], t.tile_n), yz[0], yz[1]};
      // Split-K's slices take z (conv2d_backward_weight, whose rows are its OC output channels: never folded).
      if (yz[1] > 1) throw core::Error(core::ErrorKind::Internal, e.label() + ": split-K with its rows folded into z");
      return {div_up(size[1], t.tile_n), yz[0], e.split_k};
    }
    case core::Grid::Single: return {1, 1, 1};
  }
  return {1, 1, 1};
}

void Kernels::dispatch(VkCommandBuffer cmd, const core::PlanEntry& e, const EntrySets& sets,
                       const core::KernelArgs& args) const {
  const vk::ComputePipeline& p = pipeline(e);
  if (args.bytes != p.push_constant_bytes())
    throw core::Error(core::ErrorKind::Internal, std::string(core::kernel_name(e.op)) + ": " +
                                                     std::to_string(args.bytes) + " bytes of arguments, its params " +
                                                     "struct has " + std::to_string(p.push_constant_bytes()));
  const bool split = runs_split(e);
  if (split && sets.reduce == VK_NULL_HANDLE)
    throw core::Error(core::ErrorKind::Internal, e.label() + ": split-K without the reduce's descriptor set");
  const std::array<uint32_t, 3> g = groups(e);
  if (!sets.chunks.empty()) {
    for (size_t i = 0; i < sets.chunks.size(); ++i) {
      // WAW: each chunk writes only its own rows of x_batch and y_batch, but through the same bindings, which are
      // ordered here (the synchronization validation sees writes to one bound range, not which elements).
      if (i > 0) vk::compute_barrier(cmd);
      core::GatherBatchParams chunk = args.as<core::GatherBatchParams>();
      chunk.row_begin = sets.chunks[i].row_begin;
      chunk.row_end = sets.chunks[i].row_end;
      vk::record_dispatch(cmd, p, sets.chunks[i].set, &chunk, g[0], g[1]);
    }
    return;
  }
  vk::record_dispatch(cmd, p, sets.main, args.data(), g[0], g[1], g[2]);
  if (!split) return;
  // RAW: the reduce reads every slice's partial product.
  vk::compute_barrier(cmd);
  const core::PlanEntry reduce = core::split_k_reduce_entry(e, precision_);
  const core::KernelArgs reduce_args = core::kernel_def(reduce.op).args(reduce, core::StepArgs{});
  vk::record_dispatch(cmd, pipeline(reduce.op), sets.reduce, reduce_args.data(), groups(reduce)[0]);
}

}  // namespace gpu
