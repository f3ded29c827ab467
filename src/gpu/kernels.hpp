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
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_table.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "vk/devices.hpp"
#include "vk/pipeline.hpp"

namespace gpu {

// The shared-memory tiling of the three GEMM kernels (specialization constants of shaders/common/gemm.glsl).
struct GemmTiles {
  uint32_t tile_m = 64, tile_n = 64, tile_k = 16, thread_m = 4, thread_n = 4;
  uint32_t shared_bytes() const { return (tile_m + tile_n) * tile_k * 4; }
  uint32_t invocations() const { return (tile_m / thread_m) * (tile_n / thread_n); }
};

// The first tiling of a fixed list that fits the device's maxComputeSharedMemorySize and
// maxComputeWorkGroupInvocations. GPUs: 64x64x16 with 4x4 outputs per invocation (8 KiB, 256 invocations).
// Software devices (lavapipe): 64x64x16 with 8x8 per invocation (64 invocations): llvmpipe runs the invocations of
// a workgroup as SIMD lanes and pays for every shared-memory load lane by lane, so more work per invocation is
// faster there (measured on lavapipe, 2 cores: 1.10 vs 0.35 GFLOP/s for matmul_forward 128x784x256).
// TRAINSCOPE_GEMM_TILES="tile_m,tile_n,tile_k,thread_m,thread_n" overrides the choice (for experiments).
GemmTiles choose_gemm_tiles(const VkPhysicalDeviceLimits& limits, bool software_device);

// Every tiling choose_gemm_tiles may pick (the parity tests run each).
std::vector<GemmTiles> gemm_tile_candidates();

// Whether the device can run the kernels' `precision` variant: the 16-bit variants need storageBuffer16BitAccess
// (VK_KHR_16bit_storage, core in Vulkan 1.1); they use no 16-bit arithmetic, so shaderFloat16 is not required.
// When not, *why (if given) says what is missing.
bool precision_supported(const vk::DeviceInfo& device, core::Precision precision, std::string* why = nullptr);

// Every pipeline variant of `def` that this device runs and that the parity test must cover: each tiling of
// gemm_tile_candidates() that fits the device for a GEMM (Grid::Gemm), the default for any other kernel. GEMM variants
// of other kinds (vector loads, split-K, cooperative matrices) belong in this list too, so that the test covers them.
std::vector<GemmTiles> variants_to_test(const core::KernelDef& def, const VkPhysicalDeviceLimits& limits);

class Kernels {
 public:
  // tiles: the GEMM tiling (default: choose_gemm_tiles for this device). precision: the storage variant of every
  // kernel (the fp16-only loss-scaling kernels exist only in fp16). cache: the pipeline cache to compile through
  // (vk::PipelineCache), or none. Throws core::Error(Vulkan) if the device does not support the precision
  // (precision_supported).
  explicit Kernels(vk::Context& ctx, std::optional<GemmTiles> tiles = {},
                   core::Precision precision = core::Precision::FP32, VkPipelineCache cache = VK_NULL_HANDLE);

  // Throws core::Error(Internal) for a kernel that has no variant in this precision.
  const vk::ComputePipeline& pipeline(core::Op op) const;
  const GemmTiles& tiles() const { return tiles_; }
  core::Precision precision() const { return precision_; }

  // Workgroup counts (x, y) of one dispatch of plan entry `e`, from its kernel's grid and this tiling.
  std::array<uint32_t, 2> groups(const core::PlanEntry& e) const;

  // Binds e's kernel and `set` (its bindings in the table's order), pushes `args` (its params struct), dispatches
  // groups(e). Throws core::Error(Internal) when args belong to another kernel.
  void dispatch(VkCommandBuffer cmd, const core::PlanEntry& e, VkDescriptorSet set, const core::KernelArgs& args) const;

 private:
  GemmTiles tiles_;
  core::Precision precision_;
  std::vector<vk::ComputePipeline> pipelines_;  // by core::Op; empty where the kernel has no variant in precision_
};

}  // namespace gpu
