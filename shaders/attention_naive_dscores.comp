// attention_naive_dscores: the naive attention's softmax backward, in place over the matrix in memory: the
// probabilities P read, the scores' gradient dS written over them.
//   att[row][u] = P(t, u) (dy_t . v_u - dy_t . y_t) * scale for u <= t, 0 after the diagonal
// (dS = P (dP - sum over u of P dP), dP = dy v^T; that sum is dy_t . y_t since y_t = sum over u of P v_u, as
// FlashAttention-2's D, Dao 2023). One invocation per row (grid-stride over B * H * T rows): dy_t . y_t once, then
// each key's dy_t . v_u.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;  // the default; gpu::Kernels specializes it to the device

layout(std430, binding = 0) buffer Att { STORE_T att[]; };
layout(std430, binding = 1) readonly buffer Qkv { STORE_T qkv[]; };
layout(std430, binding = 2) readonly buffer Y { STORE_T y[]; };
layout(std430, binding = 3) readonly buffer Dy { STORE_T dy[]; };

layout(push_constant) uniform Push { AttentionParams p; };

void main() {
  uint C = p.H * p.D, rows = p.B * p.H * p.T;
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint r = gl_GlobalInvocationID.x; r < rows; r += stride) {
    uint t = r % p.T, head = r / p.T, b = head / p.H, h = head % p.H, first = r * p.T;
    uint out_t = (b * p.T + t) * C + h * p.D;
    float w = 0.0;
    for (uint d = 0u; d < p.D; ++d) w += load_t(dy[out_t + d]) * load_t(y[out_t + d]);
    for (uint u = 0u; u < p.T; ++u) {
      float ds = 0.0;
      if (u <= t) {
        uint v = (b * p.T + u) * 3u * C + 2u * C + h * p.D;
        float dp = 0.0;
        for (uint d = 0u; d < p.D; ++d) dp += load_t(dy[out_t + d]) * load_t(qkv[v + d]);
        ds = load_t(att[first + u]) * (dp - w) * p.scale;
      }
      att[first + u] = store_t(ds);
    }
  }
}
