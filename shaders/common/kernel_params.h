// The push-constant block of every kernel (one struct per kernel) and the structs kernels share through buffers (the
// fp16 loss scaler's state, the scale history), written once for both languages:
//   GLSL: a kernel declares `layout(push_constant) uniform Push { MatmulForwardParams p; };` and reads p.B, ...
//   C++:  core::MatmulForwardParams, filled by the kernel table (core/kernel_table.cpp) and read by the CPU twins and
//         the reference (cpu/kernel_calls.cpp); the GPU pushes the same bytes.
// Only 32-bit scalar members (uint, int, float) are allowed: std430 (push constants and storage buffers) then puts
// member i at byte 4*i in GLSL, exactly where C++ puts it, which the static_asserts at the end check on the C++ side
// and tests/test_kernel_parity.cpp checks in every compiled SPIR-V module (push-constant size and member offsets).
// GLSL struct members take no initialisers, so C++ code value-initialises these structs (`MatmulForwardParams p{}`).
#ifndef TRAINSCOPE_KERNEL_PARAMS_H
#define TRAINSCOPE_KERNEL_PARAMS_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace core {
using uint = std::uint32_t;
#endif

// gather_batch: x_out (B,C), y_out (B) <- rows order[first + b] of the dataset.
// The binding x holds rows [row_begin, row_end) of the dataset (x[0] is row row_begin): a GPU dataset larger than
// maxStorageBufferRange is gathered in one dispatch per chunk of rows (gpu::Kernels), each writing only the batch rows
// it holds. The kernel table fills 0, 0xFFFFFFFF (the whole dataset), which is all the CPU twin and the reference do.
struct GatherBatchParams {
  uint B;
  uint C;
  uint first;
  uint row_begin;
  uint row_end;
};

// matmul_forward: out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)).
struct MatmulForwardParams {
  uint B;
  uint C;
  uint OC;
  uint apply_act;  // 1: a hidden layer (the activation, and preact kept), 0: the logits
  uint act;        // ACT_RELU (0) | ACT_GELU (1) | ACT_SILU (2), shaders/common/activation.glsl
  uint add_bias;   // 1: the fused epilogue adds the bias; 0 (--unfused): the plain sums, bias_add follows
};

// matmul_backward_weight (dweight (OC,C) = doutᵀ · inp) and matmul_backward_data (dinp (B,C) = dout · weight).
struct MatmulBackwardParams {
  uint B;
  uint C;
  uint OC;
  uint k_slice;  // matmul_backward_weight split into K slices (core::PlanEntry::split_k): the batch rows of one slice,
                 // workgroups z sum rows [z * k_slice, min(B, (z + 1) * k_slice)); B when not split. Backward data: B.
};

// The second pass of a split matmul_backward_weight (shaders/splitk/split_k_reduce.comp): dweight[i] = the sum of
// partials[s * count + i] over s = 0 .. slices-1 in that order, in fp32, rounded once to the storage type.
struct SplitKReduceParams {
  uint count;   // outputs: OC x C
  uint slices;  // partial products
};

// The convolution and pooling kernels read and write NHWC activations: B images of H x W pixels with C channels,
// channel fastest (element (b, y, x, c) at ((b * H + y) * W + x) * C + c), so that a convolution is a GEMM over pixel
// rows and a dense layer after it reads the flattened (B, H*W*C) tensor as it is. Weights are (OC, KS, KS, C).
// conv2d_forward: out (B,OH,OW,OC) = act(conv(inp (B,H,W,C), weight (OC,KS,KS,C)) + bias (OC)), stride 1, zero
// padding `pad` on each side (OH = H + 2 pad - KS + 1); preact keeps the value before the activation.
struct Conv2dForwardParams {
  uint B;
  uint H;
  uint W;
  uint C;
  uint OC;
  uint OH;
  uint OW;
  uint KS;         // kernel size (KS x KS)
  uint pad;        // zero padding on each side
  uint apply_act;  // as MatmulForwardParams
  uint act;
  uint add_bias;
};

// conv2d_backward_data (dinp (B,H,W,C) from dout (B,OH,OW,OC) and weight) and conv2d_backward_weight (dweight
// (OC,KS,KS,C) from dout and inp (B,H,W,C)); the shapes as Conv2dForwardParams.
struct Conv2dBackwardParams {
  uint B;
  uint H;
  uint W;
  uint C;
  uint OC;
  uint OH;
  uint OW;
  uint KS;
  uint pad;
};

// max_pool_forward: out (B,OH,OW,C) = the maximum of each 2x2 window of inp (B,H,W,C), stride 2, OH = H / 2 (rounded
// down: an odd last row or column is dropped, as torch.nn.MaxPool2d(2)). max_pool_backward: dinp (B,H,W,C) = dout of
// the window at the window's first maximum (in the order (0,0), (0,1), (1,0), (1,1)), 0 elsewhere.
struct MaxPoolParams {
  uint B;
  uint H;
  uint W;
  uint C;
  uint OH;
  uint OW;
};

// softmax_xent_forward_backward: losses (B), dlogits (B,K), correct (B) <- logits (B,K), labels (B). A label below 0
// (a transformer's position whose target does not count) gives loss 0, correct 0 and a zero gradient row.
struct SoftmaxXentParams {
  uint B;
  uint K;
  float dloss_scale;  // 1/B (1/the positions that count): the gradient of the mean loss (fp16: times the loss scale)
  uint write_grad;    // 0 in evaluation: dlogits is not written
  uint out_offset;    // losses and correct are written at out_offset + b (evaluation fills one test-set array)
};

// layernorm_forward, layernorm_backward, layernorm_backward_params: `rows` rows of C features (torch.nn.LayerNorm).
struct LayerNormParams {
  uint rows;
  uint C;
  float eps;        // added to the variance: 1e-5, torch's default
  uint accumulate;  // layernorm_backward: 1 adds din to what the tensor holds (a transformer's residual stream, whose
                    // gradient the branch added first), 0 overwrites it
};

// The attention kernels (fused: attention_forward_fused, attention_backward_dq, _dkv; naive: attention_naive_*):
// causal multi-head attention of B sequences of T positions, H heads of D features.
struct AttentionParams {
  uint B;
  uint T;
  uint H;
  uint D;        // at most 64 (the shader's MAX_D: its shared tiles and registers)
  float scale;   // 1 / sqrt(D)
};

// embedding_forward, embedding_backward: B sequences of T tokens, C features per token, a vocabulary of V tokens.
struct EmbeddingParams {
  uint B;
  uint T;
  uint C;
  uint V;
  uint accumulate;  // embedding_backward: 1 adds into the token embeddings' gradient (tied to the output projection,
                    // whose backward wrote it first), 0 overwrites it
};

// argmax: predictions (B) <- the index of the first maximum of each row of logits (B,K).
struct ArgmaxParams {
  uint B;
  uint K;
};

// loss_reduce: loss_history[slot] = mean(losses (B)).
struct LossReduceParams {
  uint B;
  uint slot;
  uint count;  // the divisor of the mean: B, or the positions whose target counts (a transformer's masked mean)
};

// gather_tokens: a transformer's batch of B sequences of T tokens and their T targets each, from the token dataset
// (N, T) by the epoch's order, as gather_batch does for images.
struct GatherTokensParams {
  uint B;
  uint T;
  uint first;
};

// residual_forward: out (N) = a (N) + b (N), the residual connection (He et al. 2016), N = rows x C.
struct ResidualParams {
  uint N;
};

// act_backward: dpreact (N) = dout (N) * act'(preact (N)).
struct ActBackwardParams {
  uint N;
  uint act;
};

// bias_add (--unfused): out (B,OC) += bias (OC), in place.
struct BiasAddParams {
  uint B;
  uint OC;
};

// act_forward (--unfused): preact (N) = out (N); out (N) = act(out (N)), in place.
struct ActForwardParams {
  uint N;
  uint act;
};

// bias_backward: dbias (OC) = sum over b of dout (B,OC). On the GPU each column is summed by BIAS_BACKWARD_LANES
// invocations (row lanes), lane l over rows l, l + LANES, ..., then the lanes' sums added as a tree in shared memory
// (shaders/bias_backward.comp): the dispatch has OC x LANES invocations.
#define BIAS_BACKWARD_LANES 32
struct BiasBackwardParams {
  uint B;
  uint OC;
};

// adamw_update over the flat parameter buffer (N). t: the update's step (1-based), bc1 = 1 - beta1^t and
// bc2 = 1 - beta2^t computed from it on the host in double (torch.optim.AdamW); the fp16 variants take t from the
// loss scaler's step clock instead (LossScalerBuffer::optimizer_steps + 1).
struct AdamWParams {
  uint N;
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
  float bc1;
  float bc2;
  uint t;
};

// sgd_update over the flat parameter buffer (N); t <= 1: the first step (momentum buffer = gradient).
struct SgdParams {
  uint N;
  float lr;
  float momentum;
  float weight_decay;
  uint t;
};

// check_finite_grads: found_inf = any of grads (N) is inf or NaN.
struct CheckFiniteParams {
  uint N;
};

// update_loss_scale: GradScaler's rule on the loss scaler, the step's (scale, found_inf) into history[slot].
struct UpdateLossScaleParams {
  float growth_factor;
  float backoff_factor;
  uint growth_interval;
  uint slot;
  float beta1;  // AdamW's betas: the step clock keeps beta^t (see LossScalerBuffer)
  float beta2;
};

// The fp16 loss scaler's state in one 32-byte buffer (dynamic loss scaling, torch.cuda.amp.GradScaler semantics;
// core/loss_scaler.hpp). The first four members are core::LossScalerState; the rest is the optimizer's step clock,
// kept beside it because a skipped step must not count as an optimizer step (torch skips optimizer.step()) and only
// the device knows which steps were skipped until the host reads them back.
struct LossScalerBuffer {
  float scale;           // the loss scale of this step (the softmax multiplies dlogits by it, the optimizer divides)
  uint growth_tracker;   // clean steps since the last growth or overflow
  uint skipped;          // optimizer steps skipped since the start
  uint found_inf;        // set to 1 by check_finite_grads on an inf/NaN; update_loss_scale consumes and clears it
  uint optimizer_steps;  // optimizer updates applied (AdamW's t of the next update is optimizer_steps + 1)
  float beta1_pow;       // beta1^optimizer_steps and beta2^optimizer_steps, multiplied in on every applied update, so
  float beta2_pow;       // that AdamW's bias corrections 1 - beta^t need no pow() on the device
  uint reserved;
};

// One step's entry of the scale history update_loss_scale writes for the host.
struct ScaleHistoryEntry {
  float loss_scale;  // the scale this step's backward pass used
  uint found_inf;    // 1: its gradients overflowed and the optimizer step was skipped
};

#ifdef __cplusplus
// std430 puts 32-bit member i at byte 4*i: so must C++ (no padding, nothing larger than 4 bytes).
#define TRAINSCOPE_PARAMS_LAYOUT(T, members, last)                                                          \
  static_assert(sizeof(T) == 4 * (members) && offsetof(T, last) == 4 * ((members) - 1) && alignof(T) == 4, \
                #T " must be " #members " 32-bit members in a row, as std430 lays it out in GLSL")
TRAINSCOPE_PARAMS_LAYOUT(GatherBatchParams, 5, row_end);
TRAINSCOPE_PARAMS_LAYOUT(MatmulForwardParams, 6, add_bias);
TRAINSCOPE_PARAMS_LAYOUT(MatmulBackwardParams, 4, k_slice);
TRAINSCOPE_PARAMS_LAYOUT(SplitKReduceParams, 2, slices);
TRAINSCOPE_PARAMS_LAYOUT(Conv2dForwardParams, 12, add_bias);
TRAINSCOPE_PARAMS_LAYOUT(Conv2dBackwardParams, 9, pad);
TRAINSCOPE_PARAMS_LAYOUT(MaxPoolParams, 6, OW);
TRAINSCOPE_PARAMS_LAYOUT(SoftmaxXentParams, 5, out_offset);
TRAINSCOPE_PARAMS_LAYOUT(ArgmaxParams, 2, K);
TRAINSCOPE_PARAMS_LAYOUT(LayerNormParams, 4, accumulate);
TRAINSCOPE_PARAMS_LAYOUT(AttentionParams, 5, scale);
TRAINSCOPE_PARAMS_LAYOUT(LossReduceParams, 3, count);
TRAINSCOPE_PARAMS_LAYOUT(GatherTokensParams, 3, first);
TRAINSCOPE_PARAMS_LAYOUT(ResidualParams, 1, N);
TRAINSCOPE_PARAMS_LAYOUT(ActBackwardParams, 2, act);
TRAINSCOPE_PARAMS_LAYOUT(BiasAddParams, 2, OC);
TRAINSCOPE_PARAMS_LAYOUT(ActForwardParams, 2, act);
TRAINSCOPE_PARAMS_LAYOUT(BiasBackwardParams, 2, OC);
TRAINSCOPE_PARAMS_LAYOUT(AdamWParams, 9, t);
TRAINSCOPE_PARAMS_LAYOUT(SgdParams, 5, t);
TRAINSCOPE_PARAMS_LAYOUT(CheckFiniteParams, 1, N);
TRAINSCOPE_PARAMS_LAYOUT(EmbeddingParams, 5, accumulate);
TRAINSCOPE_PARAMS_LAYOUT(UpdateLossScaleParams, 6, beta2);
TRAINSCOPE_PARAMS_LAYOUT(LossScalerBuffer, 8, reserved);
TRAINSCOPE_PARAMS_LAYOUT(ScaleHistoryEntry, 2, found_inf);
#undef TRAINSCOPE_PARAMS_LAYOUT
}  // namespace core
#endif

#endif  // TRAINSCOPE_KERNEL_PARAMS_H
