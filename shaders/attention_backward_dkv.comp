// attention_backward_dkv: the fused attention's backward, second pass, by key row (FlashAttention-2, Dao 2023; no
// atomics: each key's dk and dv are summed by one invocation, over its queries in order).
//   dk_u = sum over t >= u of P (dy_t . v_u - delta_t) q_t * scale,  P = exp(q_t . k_u * scale - lse_t)
//   dv_u = sum over t >= u of P dy_t
//   into the k and v columns of dqkv (B*T, 3C); its q columns are left as they are (attention_backward_dq's)
// One invocation per key row; a workgroup is 32 consecutive key rows of one (sequence, head). It walks the queries in
// tiles of 32 from its first key to the end: each invocation copies one query and one dy row of the tile into shared
// memory (16 KiB at MAX_D 64, Vulkan's minimum), then every key folds the tile into its dk and dv, in registers. The
// log-sum-exp and delta of a query are read where they are (every invocation reads the same one at a time).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
#define TILE 32
#define MAX_D 64
layout(local_size_x = TILE) in;

layout(std430, binding = 0) buffer Dqkv { STORE_T dqkv[]; };
layout(std430, binding = 1) readonly buffer Qkv { STORE_T qkv[]; };
layout(std430, binding = 2) readonly buffer Lse { float lse[]; };
layout(std430, binding = 3) readonly buffer Delta { float delta[]; };
layout(std430, binding = 4) readonly buffer Dy { STORE_T dy[]; };

layout(push_constant) uniform Push { AttentionParams p; };

shared float queries[TILE * MAX_D];  // the tile's queries, row after row
shared float grads[TILE * MAX_D];    // the tile's rows of dy

void main() {
  uint T_pad = (p.T + TILE - 1u) / TILE * TILE;
  uint head = gl_WorkGroupID.x * TILE / T_pad;  // b * H + h
  uint u0 = gl_WorkGroupID.x * TILE % T_pad;    // the workgroup's first key row
  uint u = u0 + gl_LocalInvocationID.x;
  uint b = head / p.H, h = head % p.H, C = p.H * p.D;
  bool valid = u < p.T;
  float k[MAX_D], v[MAX_D], dk[MAX_D], dv[MAX_D];
  for (uint d = 0u; d < p.D; ++d) {
    k[d] = valid ? load_t(qkv[(b * p.T + u) * 3u * C + C + h * p.D + d]) : 0.0;
    v[d] = valid ? load_t(qkv[(b * p.T + u) * 3u * C + 2u * C + h * p.D + d]) : 0.0;
    dk[d] = 0.0;
    dv[d] = 0.0;
  }
  for (uint q0 = u0; q0 < p.T; q0 += TILE) {  // the queries at or after the workgroup's first key
    uint t = q0 + gl_LocalInvocationID.x;     // the query and dy row this invocation copies
    for (uint d = 0u; d < p.D; ++d) {
      queries[gl_LocalInvocationID.x * p.D + d] = t < p.T ? load_t(qkv[(b * p.T + t) * 3u * C + h * p.D + d]) : 0.0;
      grads[gl_LocalInvocationID.x * p.D + d] = t < p.T ? load_t(dy[(b * p.T + t) * C + h * p.D + d]) : 0.0;
    }
    barrier();
    if (valid) {
      uint n = min(TILE, p.T - q0);  // the tile's queries that exist
      for (uint c = (u > q0 ? u - q0 : 0u); c < n; ++c) {  // queries q0 + c >= u
        float dot_qk = 0.0, dot_gv = 0.0;
        for (uint d = 0u; d < p.D; ++d) {
          dot_qk += queries[c * p.D + d] * k[d];
          dot_gv += grads[c * p.D + d] * v[d];
        }
        uint stat = head * p.T + q0 + c;
        float prob = exp(dot_qk * p.scale - lse[stat]);
        float ds = prob * (dot_gv - delta[stat]) * p.scale;
        for (uint d = 0u; d < p.D; ++d) {
          dv[d] += prob * grads[c * p.D + d];
          dk[d] += ds * queries[c * p.D + d];
        }
      }
    }
    barrier();  // the tile is read by every key before the next one overwrites it
  }
  if (!valid) return;
  for (uint d = 0u; d < p.D; ++d) {
    dqkv[(b * p.T + u) * 3u * C + C + h * p.D + d] = store_t(dk[d]);
    dqkv[(b * p.T + u) * 3u * C + 2u * C + h * p.D + d] = store_t(dv[d]);
  }
}
