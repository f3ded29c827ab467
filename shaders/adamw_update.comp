// adamw_update: AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW, over the flat parameter buffer (N):
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
// with the bias corrections bc1 = 1 - b1^t, bc2 = 1 - b2^t computed on the host for step t (fp16: on the device, from
// the scaler's step clock).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

// Each binding twice: element by element (the tail) and 4 at a time (the same buffer).
layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 0) buffer Params4 { vec4 params4[]; };
layout(std430, binding = 1) buffer M { float m[]; };
layout(std430, binding = 1) buffer M4 { vec4 m4[]; };
layout(std430, binding = 2) buffer V { float v[]; };
layout(std430, binding = 2) buffer V4 { vec4 v4[]; };
layout(std430, binding = 3) readonly buffer Grads { STORE_T grads[]; };
layout(std430, binding = 3) readonly buffer Grads4 { STORE_VEC4 grads4[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 4) writeonly buffer Weights16 { STORE_T weights16[]; };
layout(std430, binding = 4) writeonly buffer Weights16_4 { STORE_VEC4 weights16_4[]; };
#endif
#if LOSS_SCALING
// fp16: skip the whole update when check_finite_grads found an inf/NaN; else unscale the gradients. The step count
// lives on the device (a skipped step does not count), see LossScalerBuffer in kernel_params.h.
layout(std430, binding = 5) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { AdamWParams p; };

// One AdamW step of four elements (component-wise, so each gets exactly the scalar form's operations): the gradient
// (unscaled), the master weight, m and v in; the new weight, m and v out.
void adamw(vec4 g, inout vec4 w, inout vec4 mi, inout vec4 vi, float bc1, float bc2) {
  w *= 1.0 - p.lr * p.weight_decay;
  mi = p.beta1 * mi + (1.0 - p.beta1) * g;
  vi = p.beta2 * vi + (1.0 - p.beta2) * g * g;
  w = w - p.lr * (mi / bc1) / (sqrt(vi / bc2) + p.eps);
}

// One pass: elements 4i .. 4i+3 of every tensor read once and written once, grid-stride over the N/4 groups of four,
// then the last N % 4 elements one per invocation (the scalar tail, in lane x).
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
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x, n4 = p.N / 4;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride) {
    vec4 w = params4[i], mi = m4[i], vi = v4[i];
    adamw(load4_t(grads4[i]) * grad_scale, w, mi, vi, bc1, bc2);
    m4[i] = mi;
    v4[i] = vi;
    params4[i] = w;
#if DTYPE_16BIT
    weights16_4[i] = store4_t(w);
#endif
  }
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N) {
    vec4 w = vec4(params[i]), mi = vec4(m[i]), vi = vec4(v[i]);
    adamw(vec4(load_t(grads[i]) * grad_scale), w, mi, vi, bc1, bc2);
    m[i] = mi.x;
    v[i] = vi.x;
    params[i] = w.x;
#if DTYPE_16BIT
    weights16[i] = store_t(w.x);
#endif
  }
}
