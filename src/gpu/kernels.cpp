// Every kernel's pipeline from the kernel table, and the workgroup counts and push constants of one dispatch.
#include "gpu/kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace gpu {

namespace {
uint32_t div_up(uint64_t n, uint32_t d) { return static_cast<uint32_t>((n + d - 1) / d); }
bool fits(const GemmTiles& t, const VkPhysicalDeviceLimits& limits) {
  return t.shared_bytes() <= limits.maxComputeSharedMemorySize &&
         t.invocations() <= limits.maxComputeWorkGroupInvocations &&
         t.tile_n / t.thread_n <= limits.maxComputeWorkGroupSize[0] &&
         t.tile_m / t.thread_m <= limits.maxComputeWorkGroupSize[1];
}
}  // namespace

std::vector<GemmTiles> gemm_tile_candidates() {
  return {GemmTiles{64, 64, 16, 8, 8}, GemmTiles{64, 64, 16, 4, 4}, GemmTiles{32, 32, 16, 4, 4},
          GemmTiles{16, 16, 8, 2, 2}};
}

GemmTiles choose_gemm_tiles(const VkPhysicalDeviceLimits& limits, bool software_device) {
  if (const char* env = std::getenv("TRAINSCOPE_GEMM_TILES")) {
    GemmTiles t;
    if (std::sscanf(env, "%u,%u,%u,%u,%u", &t.tile_m, &t.tile_n, &t.tile_k, &t.thread_m, &t.thread_n) == 5 &&
        t.thread_m && t.thread_n && t.tile_m % t.thread_m == 0 && t.tile_n % t.thread_n == 0 &&
        t.shared_bytes() <= limits.maxComputeSharedMemorySize &&
        t.invocations() <= limits.maxComputeWorkGroupInvocations)
      return t;
  }
  const std::vector<GemmTiles> candidates = gemm_tile_candidates();
  for (size_t i = software_device ? 0 : 1; i < candidates.size(); ++i)
    if (fits(candidates[i], limits)) return candidates[i];
  return candidates.back();  // 16x16x8 needs 1 KiB and 64 invocations: below every device's guaranteed minimum
}

bool precision_supported(const vk::DeviceInfo& device, core::Precision precision, std::string* why) {
  if (precision == core::Precision::FP32 || device.storage_16bit) return true;
  if (why)
    *why = std::string(core::to_string(precision)) +
           " needs 16-bit storage buffers (VK_KHR_16bit_storage storageBuffer16BitAccess), which " + device.name +
           " does not support; use fp32";
  return false;
}

std::vector<GemmTiles> variants_to_test(const core::KernelDef& def, const VkPhysicalDeviceLimits& limits) {
  if (def.grid != core::Grid::Gemm) return {GemmTiles{}};
  std::vector<GemmTiles> out;
  for (const GemmTiles& t : gemm_tile_candidates())
    if (fits(t, limits)) out.push_back(t);
  return out;
}

Kernels::Kernels(vk::Context& ctx, std::optional<GemmTiles> tiles, core::Precision precision, VkPipelineCache cache)
    : tiles_(tiles ? *tiles : choose_gemm_tiles(ctx.limits(), ctx.info().software)), precision_(precision) {
  if (std::string why; !precision_supported(ctx.info(), precision, &why))
    throw core::Error(core::ErrorKind::Vulkan, why);
  // Variant names as in shaders/shaders.cmake: "<kernel>", "<kernel>_fp16", "<kernel>_bf16".
  const std::string suffix = precision == core::Precision::FP32 ? "" : std::string("_") + core::to_string(precision);
  const std::array<uint32_t, 7> gemm_spec = {tiles_.tile_m, tiles_.tile_n, tiles_.tile_k, tiles_.thread_m,
                                             tiles_.thread_n, tiles_.tile_n / tiles_.thread_n,
                                             tiles_.tile_m / tiles_.thread_m};
  for (const core::KernelDef& def : core::kernel_table()) {
    pipelines_.emplace_back();
    if (!def.exists_in(precision)) continue;
    const bool gemm = def.grid == core::Grid::Gemm;
    const std::span<const uint32_t> spec = gemm ? std::span<const uint32_t>(gemm_spec) : std::span<const uint32_t>();
    pipelines_.back() =
        vk::ComputePipeline(ctx, def.name + suffix, def.binding_count(precision), def.params_bytes, spec, cache);
  }
}

const vk::ComputePipeline& Kernels::pipeline(core::Op op) const {
  const vk::ComputePipeline& p = pipelines_.at(static_cast<size_t>(op));
  if (p.pipeline() == VK_NULL_HANDLE)
    throw core::Error(core::ErrorKind::Internal, std::string(core::kernel_name(op)) + " has no " +
                                                     core::to_string(precision_) + " variant");
  return p;
}

std::array<uint32_t, 2> Kernels::groups(const core::PlanEntry& e) const {
  const core::KernelDef& def = core::kernel_def(e.op);
  const std::array<uint64_t, 2> size = def.grid_size(e);
  switch (def.grid) {
    case core::Grid::Elements:  // grid-stride loops: the group count may stay under maxComputeWorkGroupCount[0]
      return {std::clamp<uint32_t>(div_up(size[0], def.local_size), 1u, 65535u), 1};
    case core::Grid::Rows: return {std::max(1u, div_up(size[0], def.local_size)), 1};
    case core::Grid::Gemm: return {div_up(size[1], tiles_.tile_n), div_up(size[0], tiles_.tile_m)};
    case core::Grid::Single: return {1, 1};
  }
  return {1, 1};
}

void Kernels::dispatch(VkCommandBuffer cmd, const core::PlanEntry& e, VkDescriptorSet set,
                       const core::KernelArgs& args) const {
  const vk::ComputePipeline& p = pipeline(e.op);
  if (args.bytes != p.push_constant_bytes())
    throw core::Error(core::ErrorKind::Internal, std::string(core::kernel_name(e.op)) + ": " +
                                                     std::to_string(args.bytes) + " bytes of arguments, its params " +
                                                     "struct has " + std::to_string(p.push_constant_bytes()));
  const std::array<uint32_t, 2> g = groups(e);
  vk::record_dispatch(cmd, p, set, args.data(), g[0], g[1]);
}

}  // namespace gpu
