// attention_naive_dk: the naive attention's backward to the keys, from the scores' gradient dS in memory, by key:
//   dk[b, u, h*D + d] = sum over t >= u of att[((b H + h) T + t) T + u] q[b, t, h*D + d]
// into the k columns of dqkv (B*T, 3C); its q and v columns are left as they are. One invocation per key feature
// (grid-stride over B*T*C); it reads a column of the matrix, T entries apart.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) buffer Dqkv { STORE_T dqkv[]; };
layout(std430, binding = 1) readonly buffer Att { STORE_T att[]; };
layout(std430, binding = 2) readonly buffer Qkv { STORE_T qkv[]; };

layout(push_constant) uniform Push { AttentionParams p; };

void main() {
  uint C = p.H * p.D, n = p.B * p.T * C;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint c = i % C, u = i / C % p.T, b = i / (C * p.T), h = c / p.D;
    uint head = (b * p.H + h) * p.T * p.T;
    float sum = 0.0;
    for (uint t = u; t < p.T; ++t) sum += load_t(att[head + t * p.T + u]) * load_t(qkv[(b * p.T + t) * 3u * C + c]);
    dqkv[(b * p.T + u) * 3u * C + C + c] = store_t(sum);
  }
}
