// sgd_update: SGD with momentum, torch.optim.SGD semantics (dampening 0, no Nesterov), over the flat buffer (N):
//   g += wd*p; buf = momentum*buf + g (buf = g on the first step); p -= lr*buf
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 1) buffer Buf { float momentum_buf[]; };
layout(std430, binding = 2) readonly buffer Grads { STORE_T grads[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 3) writeonly buffer Weights16 { STORE_T weights16[]; };
#endif
#if LOSS_SCALING
// fp16: skip the whole update when check_finite_grads found an inf/NaN; else unscale the gradients. The step count
// lives on the device (a skipped step does not count), see LossScalerBuffer in kernel_params.h.
layout(std430, binding = 4) readonly buffer Scaler { LossScalerBuffer s; };
#endif

layout(push_constant) uniform Push { SgdParams p; };

void main() {
#if LOSS_SCALING
  if (s.found_inf != 0u) return;
  float grad_scale = 1.0 / s.scale;  // exact for the power-of-two scales of the default schedule
  bool first_step = s.optimizer_steps == 0u;
#else
  float grad_scale = 1.0;
  bool first_step = p.t <= 1u;
#endif
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float g = load_t(grads[i]) * grad_scale + p.weight_decay * params[i];
    float buf = first_step ? g : p.momentum * momentum_buf[i] + g;
    momentum_buf[i] = buf;
    float w_new = params[i] - p.lr * buf;
    params[i] = w_new;
#if DTYPE_16BIT
    weights16[i] = store_t(w_new);
#endif
  }
}
