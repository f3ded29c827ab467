// softmax_xent_forward_backward: losses (B) = -log softmax(logits)[label];
// dlogits (B,K) = (softmax(logits) - onehot(label)) * dloss_scale; correct (B) = argmax(logits) == label.
// One invocation per row (K is small: the classes); the stable form subtracts the row maximum.
// In evaluation (write_grad = 0) dlogits is not written and results go to losses/correct at out_offset + b.
// fp16 variant (loss scaling): dlogits is also multiplied by the current loss scale (binding 5), so that the small
// gradients of the backward pass stay above fp16's smallest values; the optimizer divides it out again.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 64) in;

layout(std430, binding = 0) writeonly buffer Losses { float losses[]; };
layout(std430, binding = 1) writeonly buffer Dlogits { STORE_T dlogits[]; };
layout(std430, binding = 2) writeonly buffer Correct { int correct[]; };
layout(std430, binding = 3) readonly buffer Logits { STORE_T logits[]; };
layout(std430, binding = 4) readonly buffer Labels { int labels[]; };
#if LOSS_SCALING
layout(std430, binding = 5) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { SoftmaxXentParams p; };

void main() {
  uint b = gl_GlobalInvocationID.x;
  if (b >= p.B) return;
  uint row = b * p.K;
  float maxv = load_t(logits[row]);
  uint argmax = 0;
  for (uint k = 1; k < p.K; ++k) {
    float z = load_t(logits[row + k]);
    if (z > maxv) {
      maxv = z;
      argmax = k;
    }
  }
  float sum = 0.0;
  for (uint k = 0; k < p.K; ++k) sum += exp(load_t(logits[row + k]) - maxv);
  int label = labels[b];
  // -log(exp(z_y - max) / sum) = log(sum) - (z_y - max)
  losses[p.out_offset + b] = log(sum) - (load_t(logits[row + uint(label)]) - maxv);
  correct[p.out_offset + b] = (int(argmax) == label) ? 1 : 0;
  if (p.write_grad != 0) {
    float inv_sum = 1.0 / sum;
#if LOSS_SCALING
    float grad_scale = p.dloss_scale * s.scale;
#else
    float grad_scale = p.dloss_scale;
#endif
    for (uint k = 0; k < p.K; ++k) {
      float prob = exp(load_t(logits[row + k]) - maxv) * inv_sum;
      float target = (int(k) == label) ? 1.0 : 0.0;
      dlogits[row + k] = store_t((prob - target) * grad_scale);
    }
  }
}
