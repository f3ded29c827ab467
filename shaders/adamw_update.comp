// adamw_update: AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW, over the flat parameter buffer (N):
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
// with the bias corrections bc1 = 1 - b1^t, bc2 = 1 - b2^t computed on the host for step t (fp16: on the device, from
// the scaler's step clock).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 1) buffer M { float m[]; };
layout(std430, binding = 2) buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Grads { STORE_T grads[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 4) writeonly buffer Weights16 { STORE_T weights16[]; };
#endif
#if LOSS_SCALING
// fp16: skip the whole update when check_finite_grads found an inf/NaN; else unscale the gradients. The step count
// lives on the device (a skipped step does not count), see LossScalerBuffer in kernel_params.h.
layout(std430, binding = 5) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { AdamWParams p; };

void main() {
#if LOSS_SCALING
  if (s.found_inf != 0u) return;
  float grad_scale = 1.0 / s.scale;  // exact for the power-of-two scales of the default schedule
  float bc1 = 1.0 - s.beta1_pow * p.beta1;  // beta^t with t = optimizer_steps + 1
  float bc2 = 1.0 - s.beta2_pow * p.beta2;
#else
  float grad_scale = 1.0;
  float bc1 = p.bc1, bc2 = p.bc2;
#endif
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float g = load_t(grads[i]) * grad_scale;
    float w = params[i] * (1.0 - p.lr * p.weight_decay);
    float mi = p.beta1 * m[i] + (1.0 - p.beta1) * g;
    float vi = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float w_new = w - p.lr * (mi / bc1) / (sqrt(vi / bc2) + p.eps);
    params[i] = w_new;
#if DTYPE_16BIT
    weights16[i] = store_t(w_new);
#endif
  }
}
