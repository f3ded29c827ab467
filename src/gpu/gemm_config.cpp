// GEMM variants: the per-device choice, the per-entry choice, binding kinds and specialization constants.
#include "gpu/gemm_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/kernel_table.hpp"

namespace gpu {

namespace {

// Why tiles `t` cannot run on a device with `limits` ("" when they can): every size positive and dividing, the shared
// memory and the workgroup within the device's limits, and at most kMaxOutputsPerInvocation accumulators per
// invocation. That last one is no Vulkan limit but the shader compiler's: each output is a register and an unrolled
// loop body, and at 64 x 64 (4096) lavapipe's LLVM compiled for 16 minutes and 6.5 GB without finishing (issue 25);
// the largest block trainscope uses is 8 x 8. 64-bit arithmetic, so that absurd sizes cannot wrap into "fitting".
std::string tiles_problem(const GemmTiles& t, const vk::DeviceLimits& limits) {
  if (!t.tile_m || !t.tile_n || !t.tile_k || !t.thread_m || !t.thread_n) return "every size must be at least 1";
  if (t.tile_m % t.thread_m || t.tile_n % t.thread_n)
    return "tile_m must be a multiple of thread_m and tile_n of thread_n";
  const uint64_t outputs = uint64_t(t.thread_m) * t.thread_n;
  if (outputs > kMaxOutputsPerInvocation)
    return fmt::format(
        "{} outputs per invocation (thread_m x thread_n), at most {}: larger register blocks take the "
        "shader compiler minutes and gigabytes",
        outputs, kMaxOutputsPerInvocation);
  const uint64_t shared = 2 * (uint64_t(t.tile_m) + 1 + uint64_t(t.tile_n) + 1) * t.tile_k * 4;  // shared_bytes()
  if (shared > limits.max_shared_memory)
    return fmt::format("{} bytes of shared memory, the device has {}", shared, limits.max_shared_memory);
  const uint64_t x = t.tile_n / t.thread_n, y = t.tile_m / t.thread_m;
  if (x * y > limits.max_workgroup_invocations || x > limits.max_workgroup_size[0] ||
      y > limits.max_workgroup_size[1])
    return fmt::format("a workgroup of {} x {} invocations, the device allows {} ({} x {} at most)", x, y,
                       limits.max_workgroup_invocations, limits.max_workgroup_size[0], limits.max_workgroup_size[1]);
  return "";
}

bool fits_limits(const GemmTiles& t, const vk::DeviceLimits& limits) { return tiles_problem(t, limits).empty(); }

// One warning per variable per process (choose_gemm_config runs for every trainer and precision), on stderr as
// TRAINSCOPE_CPU_SIMD's.
void warn_once(const char* variable, const std::string& message) {
  static std::mutex mutex;
  static std::vector<std::string> warned;
  std::lock_guard lock(mutex);
  if (std::find(warned.begin(), warned.end(), variable) != warned.end()) return;
  warned.push_back(variable);
  std::fprintf(stderr, "trainscope: warning: %s\n", message.c_str());
}

// "64,64,16,4,4" -> tiles; false unless exactly five whole numbers 1..65535 separated by commas.
bool parse_tiles(const char* text, GemmTiles& t) {
  uint32_t* fields[] = {&t.tile_m, &t.tile_n, &t.tile_k, &t.thread_m, &t.thread_n};
  const char* p = text;
  for (size_t i = 0; i < 5; ++i) {
    if (i > 0 && *p++ != ',') return false;
    char* end = nullptr;
    if (!std::isdigit(static_cast<unsigned char>(*p))) return false;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v < 1 || v > 65535) return false;
    *fields[i] = static_cast<uint32_t>(v);
    p = end;
  }
  return *p == '\0';
}

// The Texel path's tiles: 8x8 outputs per invocation (64 accumulators: more spill, fewer were slower), 8 invocations
// along n (llvmpipe's SIMD width at 256 bits), one along m. Blocks of 4 keep the RGBA texels whole.
constexpr GemmTiles kTexelTiles{8, 64, 4, 8, 8};

VkFormat texel_format(core::Precision p, bool vec4) {
  switch (p) {
    case core::Precision::FP32: return vec4 ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R32_SFLOAT;
    case core::Precision::FP16: return vec4 ? VK_FORMAT_R16G16B16A16_SFLOAT : VK_FORMAT_R16_SFLOAT;
    case core::Precision::BF16: return vec4 ? VK_FORMAT_R16G16B16A16_UINT : VK_FORMAT_R16_UINT;
  }
  return VK_FORMAT_UNDEFINED;
}

bool has_texel_formats(const vk::Device& device, core::Precision p) {
  for (bool vec4 : {true, false}) {
    VkFormatProperties props{};
    vkGetPhysicalDeviceFormatProperties(device.physical_device(), texel_format(p, vec4), &props);
    if (!(props.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT)) return false;
  }
  return true;
}

bool texel_tiles_ok(const GemmTiles& t) { return t.thread_m % 4 == 0 && t.thread_n % 4 == 0; }

}  // namespace

const char* to_string(GemmPath path) { return path == GemmPath::Texel ? "texel" : "tiled"; }

std::string GemmConfig::name() const {
  const auto& t = tiles;
  const std::string split = split_k == 1 ? ", never split-K" : split_k > 1 ? fmt::format(", split-K {}", split_k) : "";
  if (path == GemmPath::Texel)
    return fmt::format("texel {}x{}, {}x{} per invocation{}{}", t.tile_m, t.tile_n, t.thread_m, t.thread_n,
                       vector_loads ? "" : ", scalar loads", split);
  return fmt::format("tiled {}x{}x{}, {}x{} per invocation{}{}", t.tile_m, t.tile_n, t.tile_k, t.thread_m, t.thread_n,
                     vector_loads ? "" : ", scalar loads", split);
}

uint32_t busy_workgroups(const vk::DeviceInfo& device) {
  if (device.software_paths) {
    if (const char* env = std::getenv("LP_NUM_THREADS")) {
      const long n = std::strtol(env, nullptr, 10);
      if (n > 0) return static_cast<uint32_t>(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
  }
  // In 64 bits, saturated: a profile's computeUnits 4294967295 overflowed 2 x compute_units (issue 34).
  if (device.compute_units > 0)
    return static_cast<uint32_t>(std::min<uint64_t>(2 * uint64_t{device.compute_units}, UINT32_MAX));
  return device.type == "discrete GPU" ? 2 * 128 : 2 * 32;
}

namespace {
// The rule of choose_split_k for G workgroups and at most `most` slices.
uint32_t split_rule(const GemmConfig& config, uint64_t groups, uint64_t most, const vk::DeviceInfo& device) {
  // The slices take z: never more than maxComputeWorkGroupCount[2] of them, a forced TRAINSCOPE_SPLIT_K included.
  const uint32_t z_limit = device.limits.max_workgroup_count[2];
  const uint64_t z = z_limit > 0 ? z_limit : UINT32_MAX;  // 0: not read (a DeviceInfo made by hand)
  if (config.split_k >= 1) return static_cast<uint32_t>(std::min<uint64_t>(config.split_k, z));
  most = std::min(most, z);
  const uint64_t busy = busy_workgroups(device);
  if (groups >= busy || most < 2) return 1;
  return static_cast<uint32_t>(std::min((busy + groups - 1) / groups, most));
}
}  // namespace

uint32_t choose_split_k(const GemmConfig& config, const GemmTiles& tiles, const core::PlanEntry& e,
                        const vk::DeviceInfo& device) {
  const core::KernelDef& def = core::kernel_def(e.op);
  if (def.gemm.split_k == core::SplitK::None || e.B <= 0) return 1;
  const std::array<uint64_t, 2> mn = def.grid_size(e);  // the output: {M rows, N columns}
  const uint64_t groups = ((mn[0] + tiles.tile_m - 1) / tiles.tile_m) * ((mn[1] + tiles.tile_n - 1) / tiles.tile_n);
  // A convolution's tile rows folded into z leave no z for the slices: unsplit (issue 34: an internal error under
  // TRAINSCOPE_SPLIT_K=2 and a profile of one workgroup row).
  if (def.grid == core::Grid::Conv && device.limits.max_workgroup_count[1] > 0 &&
      fold_rows((mn[0] + tiles.tile_m - 1) / tiles.tile_m, device.limits)[1] > 1)
    return 1;
  switch (def.gemm.split_k) {
    case core::SplitK::Rows: return split_rule(config, groups, uint64_t(e.B / kMinSliceRows), device);
    case core::SplitK::Images: {
      const uint64_t pixels = uint64_t(e.B) * uint64_t(e.OH()) * uint64_t(e.OW());
      return split_rule(config, groups, std::min<uint64_t>(uint64_t(e.B), pixels / kMinSliceRows), device);
    }
    case core::SplitK::None: break;
  }
  return 1;
}

std::vector<GemmTiles> gemm_tile_candidates() {
  return {GemmTiles{64, 64, 16, 8, 8}, GemmTiles{64, 64, 16, 4, 4}, GemmTiles{32, 32, 16, 4, 4},
          GemmTiles{16, 16, 8, 2, 2}};
}

GemmTiles conv_tiles(const GemmConfig& config, const vk::Device& device) {
  if (config.path == GemmPath::Tiled) return config.tiles;
  const std::vector<GemmTiles> candidates = gemm_tile_candidates();
  for (size_t i = device.info().software_paths ? 0 : 1; i < candidates.size(); ++i)
    if (fits_limits(candidates[i], device.limits())) return candidates[i];
  return candidates.back();
}

bool gemm_config_fits(const GemmConfig& c, const vk::Device& device, core::Precision precision) {
  if (!fits_limits(c.tiles, device.limits())) return false;
  if (c.path == GemmPath::Texel) return texel_tiles_ok(c.tiles) && has_texel_formats(device, precision);
  // Vector loads fill whole 4-groups of a tile's rows and k-slices.
  return !c.vector_loads || (c.tiles.tile_m % 4 == 0 && c.tiles.tile_n % 4 == 0 && c.tiles.tile_k % 4 == 0);
}

GemmConfig choose_gemm_config(const vk::Device& device, core::Precision precision) {
  const vk::DeviceLimits& limits = device.limits();
  GemmConfig c;
  if (device.info().software_paths && has_texel_formats(device, precision)) {
    c.path = GemmPath::Texel;
    c.tiles = kTexelTiles;
  } else {
    // GPUs: 4x4 outputs per invocation (256 invocations); software devices without texel formats: 8x8 (llvmpipe
    // pays per lane for every shared-memory load, so more work per invocation is faster there: 1.10 vs 0.35 GFLOP/s
    // for matmul_forward 128x784x256, measured before the texel path existed).
    const std::vector<GemmTiles> candidates = gemm_tile_candidates();
    c.tiles = candidates.back();  // 16x16x8 needs 1 KiB and 64 invocations: below every device's guaranteed minimum
    for (size_t i = device.info().software_paths ? 0 : 1; i < candidates.size(); ++i)
      if (fits_limits(candidates[i], limits)) {
        c.tiles = candidates[i];
        break;
      }
  }
  // The environment's overrides, each checked: a value that is not understood, or a configuration this device
  // cannot run (checked before anything is compiled), is said once on stderr and the device's choice is kept.
  GemmConfig forced = c;
  bool forcing = false;
  if (const char* env = std::getenv("TRAINSCOPE_GEMM_PATH"); env && *env) {
    if (std::strcmp(env, "texel") == 0) {
      forced.path = GemmPath::Texel;
      forced.tiles = kTexelTiles;
      forcing = true;
    } else if (std::strcmp(env, "tiled") == 0) {
      forced.path = GemmPath::Tiled;
      forced.tiles = device.info().software_paths ? gemm_tile_candidates()[0] : gemm_tile_candidates()[1];
      forcing = true;
    } else {
      warn_once("TRAINSCOPE_GEMM_PATH", fmt::format("TRAINSCOPE_GEMM_PATH={} not understood (tiled, texel); using "
                                                    "the device's choice, {}",
                                                    env, c.name()));
    }
  }
  if (const char* env = std::getenv("TRAINSCOPE_GEMM_TILES"); env && *env) {
    GemmTiles t;
    if (parse_tiles(env, t)) {
      forced.tiles = t;
      forcing = true;
    } else {
      warn_once("TRAINSCOPE_GEMM_TILES",
                fmt::format("TRAINSCOPE_GEMM_TILES={} not understood (tile_m,tile_n,tile_k,thread_m,thread_n: five "
                            "whole numbers 1..65535, e.g. 64,64,16,4,4); using the device's tiles, {}",
                            env, c.name()));
    }
  }
  if (const char* env = std::getenv("TRAINSCOPE_SPLIT_K"); env && *env) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (std::isdigit(static_cast<unsigned char>(env[0])) && *end == 0 && n >= 1 && n <= 65535) {
      forced.split_k = static_cast<uint32_t>(n);
      c.split_k = forced.split_k;  // kept where the tiles are not
    } else {
      warn_once("TRAINSCOPE_SPLIT_K", fmt::format("TRAINSCOPE_SPLIT_K={} not understood (1: never split, N: N slices, "
                                                  "1..65535); split-K is chosen per shape",
                                                  env));
    }
  }
  if (!forcing || gemm_config_fits(forced, device, precision)) return forced;
  std::string why = tiles_problem(forced.tiles, limits);
  if (why.empty())
    why = forced.path == GemmPath::Texel ? "the texel path needs 4-wide tiles and the precision's "
                                           "texel formats"
                                         : "4-wide loads need tile_m, tile_n and tile_k multiples of 4";
  warn_once("TRAINSCOPE_GEMM_TILES/PATH",
            fmt::format("TRAINSCOPE_GEMM_PATH/TILES: {} cannot run on {}: {}; ignored, using {}", forced.name(),
                        device.info().name, why, c.name()));
  return c;
}

std::vector<GemmConfig> gemm_configs_to_test(const vk::Device& device, core::Precision precision) {
  std::vector<GemmConfig> out;
  auto add = [&](const GemmConfig& c) {
    if (!gemm_config_fits(c, device, precision)) return;
    for (const GemmConfig& o : out)
      if (o == c) return;
    out.push_back(c);
  };
  for (const GemmTiles& t : gemm_tile_candidates()) add({GemmPath::Tiled, t, true});
  add({GemmPath::Tiled, gemm_tile_candidates()[1], false});
  add({GemmPath::Texel, kTexelTiles, true});
  add({GemmPath::Texel, kTexelTiles, false});
  add(choose_gemm_config(device, precision));
  add({GemmPath::Tiled, gemm_tile_candidates()[device.info().software_paths ? 0 : 1], true, kTestSplitK});
  add({GemmPath::Texel, kTexelTiles, true, kTestSplitK});
  return out;
}

GemmVariant gemm_variant(const GemmConfig& config, const core::PlanEntry& e, const vk::DeviceLimits& limits) {
  const core::KernelDef& def = core::kernel_def(e.op);
  if (!def.gemm_shaped() || !def.gemm.vec4_ok || !def.gemm.largest_operand)
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + " is not a GEMM or convolution");
  const bool vec4 = config.vector_loads && def.gemm.vec4_ok(e);
  const bool tiled_vec4 = vec4 && def.grid == core::Grid::Gemm;  // the convolutions' tiled loads are scalar
  const bool split = e.split_k > 1;
  if (config.path == GemmPath::Texel) {
    const uint64_t largest = def.gemm.largest_operand(e);
    if (largest / (vec4 ? 4 : 1) <= limits.max_texel_buffer_elements) return {GemmPath::Texel, vec4, split};
    if (largest <= limits.max_texel_buffer_elements) return {GemmPath::Texel, false, split};
  }
  return {GemmPath::Tiled, tiled_vec4, split};
}

std::array<uint32_t, 2> fold_rows(uint64_t rows, const vk::DeviceLimits& limits) {
  const uint64_t most = std::max<uint32_t>(1, limits.max_workgroup_count[1]);
  const uint64_t z = std::max<uint64_t>(1, (rows + most - 1) / most), y = (rows + z - 1) / z;
  return {static_cast<uint32_t>(std::min<uint64_t>(y, UINT32_MAX)), static_cast<uint32_t>(std::min<uint64_t>(z, UINT32_MAX))};
}


std::vector<vk::BindingKind> gemm_binding_kinds(core::Op op, GemmVariant variant, core::Precision precision,
                                                uint32_t bindings) {
  std::vector<vk::BindingKind> kinds(bindings);
  if (variant.path == GemmPath::Texel)
    for (uint32_t b : core::kernel_def(op).gemm.operands)
      kinds.at(b) = {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texel_format(precision, variant.vec4)};
  return kinds;
}

std::array<uint32_t, 8> gemm_spec_constants(const GemmTiles& t, GemmVariant variant) {
  return {t.tile_m,  t.tile_n, t.tile_k, t.thread_m, t.thread_n, t.tile_n / t.thread_n, t.tile_m / t.thread_m,
          variant.vec4 ? 4u : 1u};
}

}  // namespace gpu
