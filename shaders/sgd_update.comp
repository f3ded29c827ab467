// sgd_update: SGD with momentum, torch.optim.SGD semantics (dampening 0, no Nesterov), over the flat buffer (N):
//   g += wd*p; buf = momentum*buf + g (buf = g on the first step); p -= lr*buf
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device (workgroup_size)

// Each binding twice: element by element (the tail) and 4 at a time (the same buffer).
layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 0) buffer Params4 { vec4 params4[]; };
layout(std430, binding = 1) buffer Buf { float momentum_buf[]; };
layout(std430, binding = 1) buffer Buf4 { vec4 momentum_buf4[]; };
layout(std430, binding = 2) readonly buffer Grads { STORE_T grads[]; };
layout(std430, binding = 2) readonly buffer Grads4 { STORE_VEC4 grads4[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 3) writeonly buffer Weights16 { STORE_T weights16[]; };
layout(std430, binding = 3) writeonly buffer Weights16_4 { STORE_VEC4 weights16_4[]; };
#endif
#if LOSS_SCALING
// fp16: skip the whole update when check_finite_grads found an inf/NaN; else unscale the gradients. The step count
// lives on the device (a skipped step does not count), see LossScalerBuffer in kernel_params.h.
layout(std430, binding = 4) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { SgdParams p; };

// One SGD step of four elements (component-wise: each gets exactly the scalar form's operations): the gradient
// (unscaled), the master weight and the momentum buffer in; the new weight and buffer out.
void sgd(vec4 g, inout vec4 w, inout vec4 buf, bool first_step) {
  g += p.weight_decay * w;
  buf = first_step ? g : p.momentum * buf + g;
  w -= p.lr * buf;
}

// One pass: elements 4i .. 4i+3 of every tensor read once and written once, grid-stride over the N/4 groups of four,
// then the last N % 4 elements one per invocation (the scalar tail, in lane x).
void main() {
#if LOSS_SCALING
  if (s.found_inf != 0u) return;
  float grad_scale = 1.0 / s.scale;  // exact for the power-of-two scales of the default schedule
  bool first_step = s.optimizer_steps == 0u;
#else
  float grad_scale = 1.0;
  bool first_step = p.t <= 1u;
#endif
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x, n4 = p.N / 4;
  for (uint i = gl_GlobalInvocationID.x; i < n4; i += stride) {
    vec4 w = params4[i], buf = first_step ? vec4(0.0) : momentum_buf4[i];
    sgd(load4_t(grads4[i]) * grad_scale, w, buf, first_step);
    momentum_buf4[i] = buf;
    params4[i] = w;
#if DTYPE_16BIT
    weights16_4[i] = store4_t(w);
#endif
  }
  uint i = 4 * n4 + gl_GlobalInvocationID.x;
  if (i < p.N) {
    vec4 w = vec4(params[i]), buf = first_step ? vec4(0.0) : vec4(momentum_buf[i]);
    sgd(vec4(load_t(grads[i]) * grad_scale), w, buf, first_step);
    momentum_buf[i] = buf.x;
    params[i] = w.x;
#if DTYPE_16BIT
    weights16[i] = store_t(w.x);
#endif
  }
}
