// softmax_xent_forward_backward: losses (B) = -log softmax(logits)[label];
// dlogits (B,K) = (softmax(logits) - onehot(label)) * dloss_scale; correct (B) = argmax(logits) == label.
// The stable form subtracts the row maximum. In evaluation (write_grad = 0) dlogits is not written and results go to
// losses/correct at out_offset + b. A label below 0 (a transformer's position whose target does not count): loss 0,
// correct 0, a zero gradient row.
// fp16 variant (loss scaling): dlogits is also multiplied by the current loss scale (binding 5), so that the small
// gradients of the backward pass stay above fp16's smallest values; the optimizer divides it out again.
//
// One invocation per row (K is small: the classes). One pass over memory: a row of up to KREG classes is read once
// into registers (4-wide when K % 4 == 0: every row then starts at a multiple of 4), and max, exp (once per logit,
// kept for the gradient), sum and the gradient are computed there. A wider row is read twice, the minimum without
// holding it: once for the maximum and the sum together (the running sum is rescaled when the maximum grows, Milakov
// & Gimelshein 2018, "Online normalizer calculation for softmax"), once more for the gradient.
// (A workgroup-wide block in shared memory with coalesced 4-wide loads was measured 0.3-0.8x this on lavapipe, whose
// shared memory and barriers are costly; neighbouring rows share cache lines, so a GPU's L1 serves this one too.)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
const uint KREG = 16;  // the widest row held in registers (Fashion-MNIST: 10 classes)
layout(local_size_x = 64, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

layout(std430, binding = 0) writeonly buffer Losses { float losses[]; };
layout(std430, binding = 1) writeonly buffer Dlogits { STORE_T dlogits[]; };
layout(std430, binding = 1) writeonly buffer Dlogits4 { STORE_VEC4 dlogits4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 2) writeonly buffer Correct { int correct[]; };
layout(std430, binding = 3) readonly buffer Logits { STORE_T logits[]; };
layout(std430, binding = 3) readonly buffer Logits4 { STORE_VEC4 logits4[]; };
layout(std430, binding = 4) readonly buffer Labels { int labels[]; };
#if LOSS_SCALING
layout(std430, binding = 5) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { SoftmaxXentParams p; };

// exp of an argument <= 0 (a logit minus the row maximum), clamped at -87: exp(-87) = 1.6e-38 is still a normal
// float (FLT_MIN = exp(-87.34)), so no result depends on whether the device flushes denormals
// (shaderDenormFlushToZeroFloat32) or on how its exp approximates arguments far below the range of a float, and a
// term that small leaves the row's sum (>= 1) unchanged.
float exp_clamped(float d) { return exp(max(d, -87.0)); }

float grad_scale() {
#if LOSS_SCALING
  return p.dloss_scale * s.scale;
#else
  return p.dloss_scale;
#endif
}

// Row b's results from its maximum, argmax and sum of exp(z - max).
void write_results(uint b, float maxv, uint argmax, float sum, float z_label, int label) {
  // -log(exp(z_y - max) / sum) = log(sum) - (z_y - max)
  losses[p.out_offset + b] = log(sum) - (z_label - maxv);
  correct[p.out_offset + b] = (int(argmax) == label) ? 1 : 0;
}

// Row b from registers: its K <= KREG logits loaded once ([[unroll]]: the array is indexed by constants, so it stays in
// registers).
void row_in_registers(uint b) {
  uint row = b * p.K;
  float z[KREG];
  if (p.K % 4 == 0) {
    [[unroll]] for (uint k = 0; k < KREG; k += 4)
      if (k < p.K) {
        vec4 v = load4_t(logits4[row / 4 + k / 4]);
        z[k] = v.x;
        z[k + 1] = v.y;
        z[k + 2] = v.z;
        z[k + 3] = v.w;
      }
  } else {
    [[unroll]] for (uint k = 0; k < KREG; ++k)
      if (k < p.K) z[k] = load_t(logits[row + k]);
  }
  float maxv = z[0];
  uint argmax = 0;
  [[unroll]] for (uint k = 1; k < KREG; ++k)
    if (k < p.K && z[k] > maxv) {
      maxv = z[k];
      argmax = k;
    }
  int label = labels[b];
  float z_label = 0.0, sum = 0.0;
  [[unroll]] for (uint k = 0; k < KREG; ++k)
    if (k < p.K) {
      if (int(k) == label) z_label = z[k];
      z[k] = exp_clamped(z[k] - maxv);  // each exp once: kept for the gradient
      sum += z[k];
    }
  write_results(b, maxv, argmax, sum, z_label, label);
  if (p.write_grad == 0) return;
  float inv_sum = 1.0 / sum, scale = grad_scale();
  [[unroll]] for (uint k = 0; k < KREG; ++k)
    if (k < p.K) z[k] = (z[k] * inv_sum - ((int(k) == label) ? 1.0 : 0.0)) * scale;
  if (p.K % 4 == 0) {
    [[unroll]] for (uint k = 0; k < KREG; k += 4)
      if (k < p.K) dlogits4[row / 4 + k / 4] = store4_t(vec4(z[k], z[k + 1], z[k + 2], z[k + 3]));
  } else {
    [[unroll]] for (uint k = 0; k < KREG; ++k)
      if (k < p.K) dlogits[row + k] = store_t(z[k]);
  }
}

// Rows wider than KREG: row b read twice from memory.
void row_in_memory(uint b) {
  uint row = b * p.K;
  float maxv = load_t(logits[row]), sum = 1.0;
  uint argmax = 0;
  for (uint k = 1; k < p.K; ++k) {
    float z = load_t(logits[row + k]);
    if (z > maxv) {
      sum = sum * exp_clamped(maxv - z) + 1.0;  // the sum so far, relative to the new maximum, plus exp(0)
      maxv = z;
      argmax = k;
    } else {
      sum += exp_clamped(z - maxv);
    }
  }
  int label = labels[b];
  write_results(b, maxv, argmax, sum, load_t(logits[row + uint(label)]), label);
  if (p.write_grad != 0) {
    float inv_sum = 1.0 / sum, scale = grad_scale();
    for (uint k = 0; k < p.K; ++k) {
      float target = (int(k) == label) ? 1.0 : 0.0;
      dlogits[row + k] = store_t((exp_clamped(load_t(logits[row + k]) - maxv) * inv_sum - target) * scale);
    }
  }
}

void main() {
  uint b = gl_GlobalInvocationID.x;
  if (b >= p.B) return;
  if (labels[b] < 0) {  // a position whose target does not count: loss 0, correct 0, no gradient
    losses[p.out_offset + b] = 0.0;
    correct[p.out_offset + b] = 0;
    if (p.write_grad != 0)
      for (uint k = 0; k < p.K; ++k) dlogits[b * p.K + k] = store_t(0.0);
    return;
  }
  if (p.K <= KREG) row_in_registers(b);
  else row_in_memory(b);
}
