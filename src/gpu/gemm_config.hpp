// The GEMM variants of the three matmul kernels (matmul_forward, matmul_backward_data, matmul_backward_weight) and
// how one is chosen: per device (the path and its tile sizes, from the device's type and limits) and per plan entry
// (4-wide loads where the shape allows them). gpu::Kernels compiles and dispatches what this file chooses; the parity
// test runs every configuration gemm_configs_to_test() lists.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "vk/device.hpp"
#include "vk/pipeline.hpp"

namespace gpu {

// Tile sizes, specialization constants 0..6 of the GEMM shaders: a workgroup computes tile_m x tile_n outputs with
// (tile_m / thread_m) x (tile_n / thread_n) invocations of thread_m x thread_n outputs each. Tiled path: k-slices of
// tile_k staged in shared memory, two of them (double buffering), rows padded by one word. Texel path: tile_k is
// unused (the k step is the load width).
struct GemmTiles {
  uint32_t tile_m = 64, tile_n = 64, tile_k = 16, thread_m = 4, thread_n = 4;
  uint32_t shared_bytes() const { return 2 * (tile_m + 1 + tile_n + 1) * tile_k * 4; }
  uint32_t invocations() const { return (tile_m / thread_m) * (tile_n / thread_n); }
  bool operator==(const GemmTiles&) const = default;
};

enum class GemmPath : uint8_t {
  Tiled,  // shaders/common/gemm.glsl: k-slices staged in shared memory; for GPUs
  Texel,  // shaders/common/gemm_texel.glsl: register blocks, operands read through texel views; for software devices
};
const char* to_string(GemmPath path);

// One way to run the three GEMM kernels.
struct GemmConfig {
  GemmPath path = GemmPath::Tiled;
  GemmTiles tiles;
  bool vector_loads = true;  // 4 elements per load where the entry's shape allows it (false: one, always)
  // matmul_backward_weight's split-K (choose_split_k): 0 = chosen per shape and device; 1 = never; n >= 2 = n slices
  // wherever K allows (the tests, the bench and TRAINSCOPE_SPLIT_K).
  uint32_t split_k = 0;
  std::string name() const;  // e.g. "texel 8x64, 8x8 per invocation" (as the bench and the tests print it)
  bool operator==(const GemmConfig&) const = default;
};

// The configuration a device runs by default (the device's paths: DeviceInfo::software_paths, which a device profile
// can change):
//   software devices (lavapipe): Texel, 8x8 outputs per invocation, 8 invocations (one SIMD vector of llvmpipe),
//     where the device can read the precision's texel formats; measured in docs/benchmarks.md;
//   others: Tiled, the first of gemm_tile_candidates() that fits maxComputeSharedMemorySize and the workgroup limits.
// TRAINSCOPE_GEMM_TILES="tile_m,tile_n,tile_k,thread_m,thread_n" overrides the tiles, TRAINSCOPE_GEMM_PATH=tiled|texel
// the path, TRAINSCOPE_SPLIT_K=n the split-K slices (1: never split; for experiments and the bench's before/after).
// A value that does not parse, or tiles the device cannot run (its shared memory and workgroup limits, more than
// kMaxOutputsPerInvocation outputs per invocation), is ignored with one warning on stderr, before anything is
// compiled.
constexpr uint32_t kMaxOutputsPerInvocation = 64;
GemmConfig choose_gemm_config(const vk::Device& device, core::Precision precision);

// Split-K, the one place that decides it. matmul_backward_weight computes dweight (OC,C) over K = the batch: at the
// output layer M x N = OC x C is small (10 x 128, 10 x 2048) while K grows with the batch, so the unsplit dispatch,
// one workgroup per output tile, launches G = ceil(OC / tile_m) x ceil(C / tile_n) workgroups: 2 to 32 for those
// layers, where a GPU keeps hundreds busy. Split-K cuts K into S slices (workgroups along z, each summing its slice
// into an fp32 partial product of OC x C), and a second dispatch adds the S partials in slice order and rounds once.
// The rule: with W = busy_workgroups(device),
//   S = 1                                     where G >= W (the device is already full), or K < 2 kMinSliceRows;
//   S = min(ceil(W / G), K / kMinSliceRows)  otherwise,
// so that S x G is about W (the partials then take at most about 2 W tiles of fp32: 8 MiB with 64x64 tiles), and a
// slice is at least kMinSliceRows rows long, so that its partial product (written once, read once by the reduce)
// stays small next to the operands it reads. config.split_k (>= 1) overrides the rule. Returns the requested S;
// core::with_split_k turns it into the slices that run (aligned, none empty). A kernel whose record says it never
// splits (KernelDef::gemm.split_k): 1.
// The same rule serves conv2d_backward_weight (SplitK::Images), whose output dweight (OC x KS*KS*C: 32 x 9 and
// 64 x 288 in the CNN) is one to a few tiles while its K is B*OH*OW pixels (25088 to 100352 at batch 128): K in
// slices of whole images, at most B of them and each at least kMinSliceRows pixels.
// G comes from the kernel's output, its grid_size {M, N}, in `tiles` (the variant's: a convolution's are
// gpu::Kernels::conv_tiles; the overload without tiles takes config.tiles, a dense GEMM's).
uint32_t choose_split_k(const GemmConfig& config, const GemmTiles& tiles, const core::PlanEntry& e,
                        const vk::DeviceInfo& device);
inline uint32_t choose_split_k(const GemmConfig& config, const core::PlanEntry& e, const vk::DeviceInfo& device) {
  return choose_split_k(config, config.tiles, e, device);
}
constexpr long kMinSliceRows = 64;

// How many workgroups the device runs at once, as far as Vulkan lets us know. A software device (lavapipe) runs
// whole workgroups on its CPU threads: LP_NUM_THREADS where set, else one per hardware thread (llvmpipe's default),
// so G >= that many is full. A GPU: 2 workgroups per compute unit (so that one can wait on memory while the other
// computes), with the units the driver reports (vk::DeviceInfo::compute_units: NVIDIA and AMD extensions); core
// Vulkan has no such query, so elsewhere an assumption: 128 units (a large discrete GPU has 60 to 144) = 256, and
// 32 units = 64 for integrated and other GPUs. Not measured on a real GPU yet (docs/benchmarks.md).
uint32_t busy_workgroups(const vk::DeviceInfo& device);

// The Tiled path's tilings, best first.
std::vector<GemmTiles> gemm_tile_candidates();

// Every configuration the parity test runs on this device: each Tiled tiling that fits, the device's default, and
// the Texel path (vector and scalar loads) where the device has its texel formats; then split-K forced to
// kTestSplitK slices on the default tiling of each path (gpu::variants_to_test runs those for matmul_backward_weight
// only: the other GEMMs never split).
std::vector<GemmConfig> gemm_configs_to_test(const vk::Device& device, core::Precision precision);
constexpr uint32_t kTestSplitK = 3;

// Whether `config` can run on the device in this precision (limits, texel formats).
bool gemm_config_fits(const GemmConfig& config, const vk::Device& device, core::Precision precision);

// The variant of one GEMM dispatch: the configuration's path, with 4-wide loads or not.
struct GemmVariant {
  GemmPath path = GemmPath::Tiled;
  bool vec4 = false;
  bool split = false;  // the split-K GEMM pass (matmul_backward_weight_splitk*: fp32 partials at binding 0)
  bool operator==(const GemmVariant&) const = default;
};

// The variant that runs GEMM-shaped plan entry e (a GEMM or a convolution) under `config`, from its kernel's record
// (KernelDef::gemm): 4-wide loads where config.vector_loads and the operands' contiguous dimensions are multiples of 4
// (gemm.vec4_ok: a dense forward's C; the backward GEMMs' and the convolutions' C and OC); the Texel path where the
// configuration's is and the largest operand (gemm.largest_operand) is within the device's maxTexelBufferElements in
// texels (4-wide, else 1-wide), else Tiled. The convolutions' Tiled path reads scalars (a patch's taps are not
// contiguous). The Split flag follows the entry (e.split_k > 1).
GemmVariant gemm_variant(const GemmConfig& config, const core::PlanEntry& e, const vk::DeviceLimits& limits);

// The implicit-GEMM convolutions (core::Grid::Conv, shaders/conv2d_*.comp) run on the configuration's path:
//   Tiled: gemm.glsl's shared-memory tiles with scalar loads (a patch's taps are not contiguous), the tiles
//     conv_tiles() gives: the configuration's own; under the Texel path (the fallback below), the first tiled
//     candidate that fits the device (8x8 outputs per invocation on software devices);
//   Texel (software devices): texel_block.glsl's register blocks of kConvTexelTiles, taps outer and channels inner,
//     so that each row's pixel is decomposed once per invocation and each tap's bounds checked once, not per element.
GemmTiles conv_tiles(const GemmConfig& config, const vk::Device& device);
// 8x8 outputs per invocation as the texel GEMMs, but the 8 invocations (llvmpipe's SIMD lanes) along m, the pixels
// (backward weight: the output channels): a convolution's N, its channels (9 to 64 in the CNN), is too narrow for the
// GEMMs' 64 columns per workgroup, while its M has tens of thousands of pixels.
constexpr GemmTiles kConvTexelTiles{64, 8, 4, 8, 8};

// `rows` tile rows of a convolution's output as workgroups along y and z, {y, z}: {rows, 1} where they fit
// maxComputeWorkGroupCount[1], else z = ceil(rows / that limit) layers of y = ceil(rows / z) rows, which the shaders
// unfold (shaders/common/tile_row.glsl). A z past maxComputeWorkGroupCount[2] is returned as it is, for
// vk::record_dispatch to refuse naming the limit (about 4e9 tile rows on the spec's minimum limits: no batch that
// fits a buffer gets there).
std::array<uint32_t, 2> fold_rows(uint64_t rows, const vk::DeviceLimits& limits);

// The binding kinds of a GEMM variant in a precision: storage buffers, and for the Texel path the operands (the
// kernel's gemm.operands) as
// uniform texel buffers of RGBA (vec4) or single-channel formats: fp32 R32G32B32A32_SFLOAT / R32_SFLOAT, fp16
// R16G16B16A16_SFLOAT / R16_SFLOAT, bf16 R16G16B16A16_UINT / R16_UINT (its bits).
std::vector<vk::BindingKind> gemm_binding_kinds(core::Op op, GemmVariant variant, core::Precision precision,
                                                uint32_t bindings);

// The specialization constants of a GEMM pipeline (ids 0..7, gemm.glsl and gemm_texel.glsl).
std::array<uint32_t, 8> gemm_spec_constants(const GemmTiles& tiles, GemmVariant variant);

}  // namespace gpu
