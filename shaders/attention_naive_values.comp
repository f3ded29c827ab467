// attention_naive_values: the naive attention's third kernel: the probabilities read back from memory, times v.
//   y (B*T, C): y[b, t, h*D + d] = sum over u <= t of att[((b H + h) T + t) T + u] v[b, u, h*D + d]
// One invocation per output (grid-stride over B*T*C); the invocations of a head's row read the same probabilities.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Y { STORE_T y[]; };
layout(std430, binding = 1) readonly buffer Att { STORE_T att[]; };
layout(std430, binding = 2) readonly buffer Qkv { STORE_T qkv[]; };

layout(push_constant) uniform Push { AttentionParams p; };

void main() {
  uint C = p.H * p.D, n = p.B * p.T * C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint c = i % C, t = i / C % p.T, b = i / (C * p.T), h = c / p.D;
    uint row = ((b * p.H + h) * p.T + t) * p.T;
    float sum = 0.0;
    for (uint u = 0u; u <= t; ++u) sum += load_t(att[row + u]) * load_t(qkv[(b * p.T + u) * 3u * C + 2u * C + c]);
    y[i] = store_t(sum);
  }
}
