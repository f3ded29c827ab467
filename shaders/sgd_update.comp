// sgd_update: SGD with momentum, torch.optim.SGD semantics (dampening 0, no Nesterov), over the flat buffer (N):
//   g += wd*p; buf = momentum*buf + g (buf = g on the first step); p -= lr*buf
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer Params_ { float params[]; };
layout(std430, binding = 1) buffer Buf { float momentum_buf[]; };
layout(std430, binding = 2) readonly buffer Grads { STORE_T grads[]; };
#if DTYPE_16BIT
// The 16-bit copy of the parameters that the forward and backward kernels read: store_t(new master value).
layout(std430, binding = 3) writeonly buffer Weights16 { STORE_T weights16[]; };
#endif

layout(push_constant) uniform Params {
  uint N;
  float lr, momentum, weight_decay;
  uint first_step;
} p;

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.N; i += stride) {
    float g = load_t(grads[i]) + p.weight_decay * params[i];
    float buf = (p.first_step != 0) ? g : p.momentum * momentum_buf[i] + g;
    momentum_buf[i] = buf;
    float w_new = params[i] - p.lr * buf;
    params[i] = w_new;
#if DTYPE_16BIT
    weights16[i] = store_t(w_new);
#endif
  }
}
