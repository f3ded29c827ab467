// gpu::Kernels: the compute pipeline of every kernel and how to dispatch it (workgroup counts, push constants).
// The buffer bindings of each kernel, in binding order (as in shaders/<kernel>.comp: outputs, then inputs):
//   gather_batch                  x_out, y_out, x, y, order
//   matmul_forward                out, preact, inp, weight, bias
//   softmax_xent_forward_backward losses, dlogits, correct, logits, labels
//   loss_reduce                   loss_history, losses
//   act_backward                  dpreact, dout, preact      (dpreact and dout may be the same range)
//   matmul_backward_weight        dweight, dout, inp
//   bias_backward                 dbias, dout
//   matmul_backward_data          dinp, dout, weight
//   adamw_update                  params, m, v, grads           (16-bit: + weights16)
//   sgd_update                    params, momentum_buf, grads   (16-bit: + weights16)
//   check_finite_grads            scaler, grads                 (fp16 only)
//   update_loss_scale             scaler, scale_history         (fp16 only)
// fp16 (dynamic loss scaling, shaders/common/loss_scale.glsl): softmax_xent_forward_backward, adamw_update and
// sgd_update take one more last binding, the 32-byte scaler state (kLossScalerBytes): the softmax multiplies dlogits by
// its scale, the optimizers skip the step when found_inf is set and otherwise divide the gradients by the scale and
// take their step count t (AdamW's bias corrections, SGD's first step) from it instead of the push constants.
// Precision (the pipeline variant, shaders/common/dtype.glsl): every tensor buffer holds the storage type, 4 or 2
// bytes per element (fp32 / fp16 / bf16 bits); fp32 always: gather_batch's dataset x, y and order, labels, losses,
// correct, loss_history, and the optimizers' params (master weights), m, v, momentum_buf. In the 16-bit variants the
// optimizers read 16-bit grads and also write weights16 = the new params rounded to nearest even, the copy that the
// forward and backward kernels read. Arithmetic and accumulation are fp32 in every variant.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/loss_scaler.hpp"
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

// The fp16 scaler's device buffer, byte for byte as shaders/common/loss_scale.glsl declares it (std430): the host's
// core::LossScalerState, then the optimizer's step clock, which only the device advances (a skipped step does not
// count). The trainer uploads it on import and reads it back for export_state().
struct LossScalerDeviceState {
  core::LossScalerState scaler;
  uint32_t optimizer_steps = 0;  // optimizer updates applied
  float beta1_pow = 1.0f;        // beta1^optimizer_steps (AdamW's bias correction of the next update: 1 - this*beta1)
  float beta2_pow = 1.0f;        // beta2^optimizer_steps
  uint32_t reserved = 0;
};
static_assert(sizeof(LossScalerDeviceState) == 32, "LossScalerDeviceState must match loss_scale.glsl");
inline constexpr uint32_t kLossScalerBytes = sizeof(LossScalerDeviceState);

// One step's entry in the scale history update_loss_scale writes for the host (a uvec2 in the shader).
struct ScaleHistoryEntry {
  float loss_scale;    // the scale this step's backward pass used
  uint32_t found_inf;  // 1: its gradients overflowed and the optimizer step was skipped
};
static_assert(sizeof(ScaleHistoryEntry) == 8, "ScaleHistoryEntry must match update_loss_scale.comp");

class Kernels {
 public:
  // tiles: the GEMM tiling (default: choose_gemm_tiles for this device). precision: the storage variant of every
  // kernel. Throws core::Error(Vulkan) if the device does not support it (precision_supported).
  explicit Kernels(vk::Context& ctx, std::optional<GemmTiles> tiles = {},
                   core::Precision precision = core::Precision::FP32);

  const vk::ComputePipeline& pipeline(core::Op op) const;
  const GemmTiles& tiles() const { return tiles_; }
  core::Precision precision() const { return precision_; }

  void gather_batch(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t first) const;
  void matmul_forward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t OC, bool apply_act,
                      core::Activation act) const;
  void softmax_xent_forward_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t K,
                                     float dloss_scale, bool write_grad, uint32_t out_offset) const;
  void loss_reduce(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t slot) const;
  void act_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, core::Activation act) const;
  void matmul_backward_weight(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t OC) const;
  void bias_backward(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t OC) const;
  void matmul_backward_data(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t B, uint32_t C, uint32_t OC) const;
  // bc1 = 1 - beta1^t, bc2 = 1 - beta2^t (torch.optim.AdamW's bias corrections), computed by the caller.
  void adamw_update(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, float lr, float beta1, float beta2,
                    float eps, float weight_decay, float bc1, float bc2) const;
  void sgd_update(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N, float lr, float momentum, float weight_decay,
                  bool first_step) const;
  // fp16 only (else core::Error(Internal)).
  void check_finite_grads(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t N) const;
  void update_loss_scale(VkCommandBuffer cmd, VkDescriptorSet set, uint32_t slot, float growth_factor,
                         float backoff_factor, uint32_t growth_interval, float beta1, float beta2) const;

 private:
  void gemm(VkCommandBuffer cmd, const vk::ComputePipeline& p, VkDescriptorSet set, const void* push, uint32_t M,
            uint32_t N) const;

  GemmTiles tiles_;
  core::Precision precision_;
  vk::ComputePipeline gather_batch_, matmul_forward_, softmax_xent_, loss_reduce_, act_backward_,
      matmul_backward_weight_, bias_backward_, matmul_backward_data_, adamw_update_, sgd_update_,
      check_finite_grads_, update_loss_scale_;  // fp16 only
};

}  // namespace gpu
