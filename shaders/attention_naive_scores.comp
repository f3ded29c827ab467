// attention_naive_scores: the naive attention's first kernel (--attention naive): every head's causal scores written
// to memory, the (B, H, T, T) matrix that attention_forward_fused never stores.
//   att[((b H + h) T + t) T + u] = q_t . k_u * scale for u <= t, 0 after the diagonal
//   qkv (B*T, 3C): q, k, v side by side, head h at h*D of each (C = H * D)
// One invocation per entry of the matrix (grid-stride); the invocations of a row read the same q_t and each its own
// k_u: nothing is shared, every score goes to memory.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) writeonly buffer Att { STORE_T att[]; };
layout(std430, binding = 1) readonly buffer Qkv { STORE_T qkv[]; };

layout(push_constant) uniform Push { AttentionParams p; };

void main() {
  uint C = p.H * p.D, n = p.B * p.H * p.T * p.T;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    uint u = i % p.T, t = i / p.T % p.T, head = i / (p.T * p.T);
    uint b = head / p.H, h = head % p.H;
    float score = 0.0;
    if (u <= t) {
      uint q = (b * p.T + t) * 3u * C + h * p.D, k = (b * p.T + u) * 3u * C + C + h * p.D;
      for (uint d = 0u; d < p.D; ++d) score += load_t(qkv[q + d]) * load_t(qkv[k + d]);
      score *= p.scale;
    }
    att[i] = store_t(score);
  }
}
