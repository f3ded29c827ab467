// gpu::Kernels: the compute pipeline of every kernel of one storage precision and GEMM tiling, made from the kernel
// table (core/kernel_table.hpp: the SPIR-V variant, its bindings, its push-constant struct, its workgroup geometry),
// and one dispatch() for all of them: the trainers and the tests bind a kernel's buffers in the table's binding order
// and record any kernel the same way.
// Precision (the pipeline variant, shaders/common/dtype.glsl): bindings of element type Storage hold fp32, fp16 or
// bf16 (bits in uint16); everything else keeps its type in every precision. The 16-bit optimizers also write the
// weights copy the other kernels read, and fp16 adds the loss scaler binding (dynamic loss scaling on the device; see
// LossScalerBuffer in shaders/common/kernel_params.h). Arithmetic and accumulation are fp32 in every variant.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/kernel_table.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "gpu/gemm_config.hpp"
#include "vk/devices.hpp"
#include "vk/pipeline.hpp"

namespace gpu {

// Whether the device can run the kernels' `precision` variant: the 16-bit variants need storageBuffer16BitAccess
// (VK_KHR_16bit_storage, core in Vulkan 1.1); they use no 16-bit arithmetic, so shaderFloat16 is not required.
// When not, *why (if given) says what is missing.
bool precision_supported(const vk::DeviceInfo& device, core::Precision precision, std::string* why = nullptr);

// Every way of running `def` on this device that the parity test must cover: for a GEMM (Grid::Gemm) each
// configuration of gemm_configs_to_test() in fp32, and in 16-bit the default one, the other path's and split-K
// (Kernels then picks the variant per shape, so the test's odd shapes reach each one); for a convolution (Grid::Conv)
// in fp32 each configuration with other conv_tiles, in 16-bit the default; the default configuration for any other
// kernel.
std::vector<GemmConfig> variants_to_test(const core::KernelDef& def, const vk::Device& device,
                                         core::Precision precision);

// A gather over a dataset larger than maxStorageBufferRange: one dispatch per chunk of whole rows, each binding its
// rows [row_begin, row_end) of the dataset (gather_batch skips the batch's other rows).
struct DataChunk {
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint32_t row_begin = 0, row_end = 0;
};

// The descriptor sets of one dispatch of a plan entry: `main` binds the kernel's bindings in the table's order. A
// split-K entry (PlanEntry::split_k > 1) runs two dispatches: the GEMM pass, whose `main` set binds the fp32 partials
// at binding 0 in place of dweight, and the reduce, whose `reduce` set binds dweight and the partials. A gather whose
// dataset the device cannot bind whole has `chunks` instead of `main`.
struct EntrySets {
  VkDescriptorSet main = VK_NULL_HANDLE;
  VkDescriptorSet reduce = VK_NULL_HANDLE;
  std::vector<DataChunk> chunks;
};

// The workgroup size a kernel that is not a GEMM runs with on this device: its table's local_size (the shader's
// default), lowered to the largest power of two within maxComputeWorkGroupInvocations and maxComputeWorkGroupSize[0]
// (the spec guarantees 128; loss_reduce's tree needs a power of two).
uint32_t workgroup_size(const core::KernelDef& def, const vk::DeviceLimits& limits);
uint32_t workgroup_size(uint32_t preferred, const vk::DeviceLimits& limits);

// The rows of `row_bytes` each that one binding of a dataset holds on this device: as many as fit
// maxStorageBufferRange with every chunk starting at a multiple of the offset alignment (and of 16 bytes, for the
// 4-wide reads). Throws vk::Error(Limit) when not even one row fits.
uint64_t rows_per_binding(uint64_t row_bytes, const vk::DeviceLimits& limits);
// How many chunks (descriptor sets) a dataset of `rows` rows of `row_bytes` is bound in: 1 where it fits whole.
uint32_t data_chunks(uint64_t rows, uint64_t row_bytes, const vk::DeviceLimits& limits);

// Bytes of the fp32 partial products a split-K entry needs (split_k x core::split_output_elements floats); 0 when e
// is not split.
VkDeviceSize split_k_partials_bytes(const core::PlanEntry& e);

class Kernels {
 public:
  // gemm: how the GEMM kernels run (default: choose_gemm_config for this device). precision: the storage variant of
  // every kernel (the fp16-only loss-scaling kernels exist only in fp16). Throws core::Error(Vulkan) if the device
  // does not support the precision (precision_supported). cache: the pipeline cache to compile
  // through (vk::PipelineCache), or none; also used for the GEMM variants compiled on first use. only: compile that
  // kernel's pipelines alone (a test of one kernel); the others then throw core::Error(Internal) when asked for.
  explicit Kernels(vk::Context& ctx, std::optional<GemmConfig> gemm = {},
                   core::Precision precision = core::Precision::FP32, VkPipelineCache cache = VK_NULL_HANDLE,
                   std::optional<core::Op> only = {});

  // The pipeline that runs plan entry e: for a GEMM or a convolution the variant gemm_variant() picks for e's shape
  // (compiled on first use), else the kernel's only one. Descriptor sets for e are allocated against it (its binding kinds).
  // Throws core::Error(Internal) for a kernel that has no variant in this precision.
  const vk::ComputePipeline& pipeline(const core::PlanEntry& e) const;
  // A kernel that is neither a GEMM nor a convolution (theirs depend on the shape: throws core::Error(Internal)).
  const vk::ComputePipeline& pipeline(core::Op op) const;
  // GEMM-shaped kernel `op` (a GEMM or a convolution: KernelDef::gemm_shaped) in variant `v`, whatever entry would
  // pick it: one builder for the family, from the kernel's record (compiled on first use). Throws
  // core::Error(Internal) for a split variant of a kernel that never splits.
  const vk::ComputePipeline& gemm_pipeline(core::Op op, GemmVariant v) const;
  const GemmConfig& gemm_config() const { return gemm_; }
  // The tiles GEMM-shaped kernel `op` runs with in variant v: a dense GEMM the configuration's; a convolution
  // (core::Grid::Conv) kConvTexelTiles on the Texel path, else gpu::conv_tiles of this configuration.
  const GemmTiles& tiles(core::Op op, GemmVariant v) const;
  GemmVariant gemm_variant(const core::PlanEntry& e) const;  // gpu::gemm_variant under this configuration
  core::Precision precision() const { return precision_; }

  // Workgroup counts (x, y, z) of one dispatch of plan entry `e`, from its kernel's grid and this tiling: a split-K
  // entry has its e.split_k slices along z; a convolution has its tile rows folded into y x z where they are more
  // than maxComputeWorkGroupCount[1] (gpu::fold_rows).
  std::array<uint32_t, 3> groups(const core::PlanEntry& e) const;

  // e as this device runs it: a kernel that may split (its record's gemm.split_k) with the split-K slices of
  // choose_split_k (PlanEntry::split_k, its figures re-derived in this precision); any other entry unchanged. The GPU
  // trainer's plan holds these.
  core::PlanEntry with_split_k(const core::PlanEntry& e) const;

  // The sets of entry e from `pool` (room for 2 sets, or data_chunks() for a gather): ranges are its bindings in the
  // table's order; for a split-K entry, partials is a buffer range of at least split_k_partials_bytes(e) (ignored
  // otherwise). A gather_batch entry whose dataset (binding DataX, rows of e.C floats) is larger than the device's
  // maxStorageBufferRange gets one set per chunk of rows (EntrySets::chunks).
  EntrySets allocate_sets(vk::DescriptorPool& pool, const core::PlanEntry& e, std::span<const vk::BufferRange> ranges,
                          vk::BufferRange partials = {}) const;

  // Binds pipeline(e) and the sets, pushes `args` (its params struct), dispatches groups(e) (x e.split_k along z);
  // a split-K entry then waits for its GEMM pass (a barrier) and dispatches the reduce, so one timestamp after this
  // times both; a chunked gather dispatches once per chunk. Throws core::Error(Internal) when args belong to another
  // kernel, or a split entry has no reduce set.
  void dispatch(VkCommandBuffer cmd, const core::PlanEntry& e, const EntrySets& sets, const core::KernelArgs& args) const;
  void dispatch(VkCommandBuffer cmd, const core::PlanEntry& e, VkDescriptorSet set, const core::KernelArgs& args) const {
    dispatch(cmd, e, EntrySets{set, VK_NULL_HANDLE, {}}, args);
  }

 private:
  vk::Context* ctx_;
  GemmConfig gemm_;
  core::Precision precision_;
  VkPipelineCache cache_;  // not owned (gpu::DeviceCache keeps it), or VK_NULL_HANDLE
  std::string suffix_;  // of the shader names: "", "_fp16", "_bf16"
  std::vector<vk::ComputePipeline> pipelines_;  // by core::Op; empty for GEMMs and where a kernel has no variant
  std::vector<uint32_t> local_sizes_;            // by core::Op: workgroup_size() (GEMMs: from the tiling)
  // GEMM and convolution pipelines by (op, path, vec4, split), made on first use.
  mutable std::map<std::tuple<core::Op, GemmPath, bool, bool>, vk::ComputePipeline> gemm_pipelines_;
  GemmTiles conv_tiles_, conv_texel_tiles_ = kConvTexelTiles;
};

}  // namespace gpu
