// Pipelines and dispatch geometry of every kernel; push-constant structs mirror the shaders' blocks.
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
// Element-wise kernels use grid-stride loops, so the group count can stay under maxComputeWorkGroupCount[0].
uint32_t elementwise_groups(uint64_t n, uint32_t local) { return std::clamp<uint32_t>(div_up(n, local), 1u, 65535u); }

struct GatherPush { uint32_t B, C, first; };
struct MatmulForwardPush { uint32_t B, C, OC, apply_act, act; };
struct MatmulPush { uint32_t B, C, OC; };
struct SoftmaxPush { uint32_t B, K; float dloss_scale; uint32_t write_grad, out_offset; };
struct LossReducePush { uint32_t B, slot; };
struct ActBackwardPush { uint32_t N, act; };
struct BiasBackwardPush { uint32_t B, OC; };
struct AdamWPush { uint32_t N; float lr, beta1, beta2, eps, weight_decay, bc1, bc2; };
struct SgdPush { uint32_t N; float lr, momentum, weight_decay; uint32_t first_step; };
struct CheckFinitePush { uint32_t N; };
struct UpdateLossScalePush { float growth_factor, backoff_factor; uint32_t growth_interval, slot; float beta1, beta2; };
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
  for (size_t i = software_device ? 0 : 1; i < candidates.size(); ++i) {
    const GemmTiles& t = candidates[i];
    if (t.shared_bytes() <= limits.maxComputeSharedMemorySize && t.invocations() <= limits.maxComputeWorkGroupInvocations &&
        t.tile_n / t.thread_n <= limits.maxComputeWorkGroupSize[0] &&
        t.tile_m / t.thread_m <= limits.maxComputeWorkGroupSize[1])
      return t;
  }
  return candidates.back();  // 16x16x8 needs 1 KiB and 64 invocations: below every device's guaranteed minimum
}

static uint32_t act_code(core::Activation a) { return a == core::Activation::ReLU ? 0u : 1u; }

bool precision_supported(const vk::DeviceInfo& device, core::Precision precision, std::string* why) {
  if (precision == core::Precision::FP32 || device.storage_16bit) return true;
  if (why)
    *why = std::string(core::to_string(precision)) +
           " needs 16-bit storage buffers (VK_KHR_16bit_storage storageBuffer16BitAccess), which " + device.name +
           " does not support; use fp32";
  return false;
}

Kernels::Kernels(vk::Context& ctx, std::optional<GemmTiles> tiles, core::Precision precision)
    : tiles_(tiles ? *tiles : choose_gemm_tiles(ctx.limits(), ctx.info().software)), precision_(precision) {
  if (std::string why; !precision_supported(ctx.info(), precision, &why))
    throw core::Error(core::ErrorKind::Vulkan, why);
  // Variant names as in shaders/shaders.cmake: "<kernel>", "<kernel>_fp16", "<kernel>_bf16".
  const std::string suffix = precision == core::Precision::FP32 ? "" : std::string("_") + core::to_string(precision);
  const auto name = [&](const char* kernel) { return kernel + suffix; };
  // The 16-bit optimizer variants write one more buffer: weights16.
  const uint32_t extra = precision == core::Precision::FP32 ? 0 : 1;
  // fp16 kernels that read the loss scaler take it as one more last binding.
  const uint32_t scaler = precision == core::Precision::FP16 ? 1 : 0;
  const std::array<uint32_t, 7> gemm_spec = {tiles_.tile_m, tiles_.tile_n, tiles_.tile_k, tiles_.thread_m,
                                             tiles_.thread_n, tiles_.tile_n / tiles_.thread_n,
                                             tiles_.tile_m / tiles_.thread_m};
  gather_batch_ = vk::ComputePipeline(ctx, name("gather_batch"), 5, sizeof(GatherPush));
  matmul_forward_ = vk::ComputePipeline(ctx, name("matmul_forward"), 5, sizeof(MatmulForwardPush), gemm_spec);
  softmax_xent_ = vk::ComputePipeline(ctx, name("softmax_xent_forward_backward"), 5 + scaler, sizeof(SoftmaxPush));
  loss_reduce_ = vk::ComputePipeline(ctx, name("loss_reduce"), 2, sizeof(LossReducePush));
  act_backward_ = vk::ComputePipeline(ctx, name("act_backward"), 3, sizeof(ActBackwardPush));
  matmul_backward_weight_ =
      vk::ComputePipeline(ctx, name("matmul_backward_weight"), 3, sizeof(MatmulPush), gemm_spec);
  bias_backward_ = vk::ComputePipeline(ctx, name("bias_backward"), 2, sizeof(BiasBackwardPush));
  matmul_backward_data_ =
      vk::ComputePipeline(ctx, name("matmul_backward_data"), 3, sizeof(MatmulPush), gemm_spec);
  adamw_update_ = vk::ComputePipeline(ctx, name("adamw_update"), 4 + extra + scaler, sizeof(AdamWPush));
  sgd_update_ = vk::ComputePipeline(ctx, name("sgd_update"), 3 + extra + scaler, sizeof(SgdPush));
  if (scaler) {
    check_finite_grads_ = vk::ComputePipeline(ctx, name("check_finite_grads"), 2, sizeof(CheckFinitePush));
    update_loss_scale_ = vk::ComputePipeline(ctx, name("update_loss_scale"), 2, sizeof(UpdateLossScalePush));
  }
}

const vk::ComputePipeline& Kernels::pipeline(core::Op op) const {
  switch (op) {
    case core::Op::GatherBatch: return gather_batch_;
    case core::Op::MatmulForward: return matmul_forward_;
    case core::Op::SoftmaxXentForwardBackward: return softmax_xent_;
    case core::Op::LossReduce: return loss_reduce_;
    case core::Op::ActBackward: return act_backward_;
    case core::Op::MatmulBackwardWeight: return matmul_backward_weight_;
    case core::Op::BiasBackward: return bias_backward_;
    case core::Op::MatmulBackwardData: return matmul_backward_data_;
    case core::Op::AdamWUpdate: return adamw_update_;
    case core::Op::SgdUpdate: return sgd_update_;
    case core::Op::CheckFiniteGrads:
    case core::Op::UpdateLossScale:
      if (precision_ != core::Precision::FP16)
        throw core::Error(core::ErrorKind::Internal, "loss-scaling kernels exist only in fp16");
      return op == core::Op::CheckFiniteGrads ? check_finite_grads_ : update_loss_scale_;
  }
  throw core::Error(core::ErrorKind::Internal, "unknown op");
}

void Kernels::gemm(VkCommandBuffer cmd, const vk::ComputePipeline& p, VkDescriptorSet set, const void* push,
                   uint32_t M, uint32_t N) const {
  vk::record_dispatch(cmd, p, set, push, div_up(N, tiles_.tile_n), div_up(M, tiles_.tile_m));
}

void Kernels::gather_batch(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t first) const {
  GatherPush push{B, C, first};
  vk::record_dispatch(cmd, gather_batch_, set, &push, elementwise_groups(uint64_t{B} * C, 256));
}

void Kernels::matmul_forward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t OC,
                             bool apply_act, core::Activation act) const {
  MatmulForwardPush push{B, C, OC, apply_act ? 1u : 0u, act_code(act)};
  gemm(cmd, matmul_forward_, set, &push, B, OC);
}

void Kernels::softmax_xent_forward_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t K,
                                            float dloss_scale, bool write_grad, uint32_t out_offset) const {
  SoftmaxPush push{B, K, dloss_scale, write_grad ? 1u : 0u, out_offset};
  vk::record_dispatch(cmd, softmax_xent_, set, &push, div_up(B, 64));
}

void Kernels::loss_reduce(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t slot) const {
  LossReducePush push{B, slot};
  vk::record_dispatch(cmd, loss_reduce_, set, &push, 1);
}

void Kernels::act_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, core::Activation act) const {
  ActBackwardPush push{N, act_code(act)};
  vk::record_dispatch(cmd, act_backward_, set, &push, elementwise_groups(N, 256));
}

void Kernels::matmul_backward_weight(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C,
                                     uint32_t OC) const {
  MatmulPush push{B, C, OC};
  gemm(cmd, matmul_backward_weight_, set, &push, OC, C);
}

void Kernels::bias_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t OC) const {
  BiasBackwardPush push{B, OC};
  vk::record_dispatch(cmd, bias_backward_, set, &push, div_up(OC, 64));
}

void Kernels::matmul_backward_data(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C,
                                   uint32_t OC) const {
  MatmulPush push{B, C, OC};
  gemm(cmd, matmul_backward_data_, set, &push, B, C);
}

void Kernels::adamw_update(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, float lr, float beta1, float beta2,
                           float eps, float weight_decay, float bc1, float bc2) const {
  AdamWPush push{N, lr, beta1, beta2, eps, weight_decay, bc1, bc2};
  vk::record_dispatch(cmd, adamw_update_, set, &push, elementwise_groups(N, 256));
}

void Kernels::sgd_update(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, float lr, float momentum,
                         float weight_decay, bool first_step) const {
  SgdPush push{N, lr, momentum, weight_decay, first_step ? 1u : 0u};
  vk::record_dispatch(cmd, sgd_update_, set, &push, elementwise_groups(N, 256));
}

void Kernels::check_finite_grads(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N) const {
  CheckFinitePush push{N};
  vk::record_dispatch(cmd, pipeline(core::Op::CheckFiniteGrads), set, &push, elementwise_groups(N, 256));
}

void Kernels::update_loss_scale(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t slot, float growth_factor,
                                float backoff_factor, uint32_t growth_interval, float beta1, float beta2) const {
  UpdateLossScalePush push{growth_factor, backoff_factor, growth_interval, slot, beta1, beta2};
  vk::record_dispatch(cmd, pipeline(core::Op::UpdateLossScale), set, &push, 1);
}

}  // namespace gpu
