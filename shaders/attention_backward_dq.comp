// attention_backward_dq: the fused attention's backward, first pass, by query row (FlashAttention-2, Dao 2023).
//   delta_t = dy_t . y_t (fp32, for attention_backward_dkv)
//   dq_t = sum over u <= t of P (dy_t . v_u - delta_t) k_u * scale,  P = exp(q_t . k_u * scale - lse_t)
//   into the q columns of dqkv (B*T, 3C); its k and v columns are left as they are (the next kernel's)
// One invocation per query row; a workgroup is 32 consecutive rows of one (sequence, head), as in
// attention_forward_fused. The workgroup walks the keys in tiles of 32 up to its last row: each invocation copies one
// key and one value row of the tile into shared memory, then every row folds the tile into its dq, in registers. The
// probabilities are recomputed from the forward's log-sum-exp and never leave the workgroup.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
#define TILE 32
#define MAX_D 64
layout(local_size_x = TILE) in;

layout(std430, binding = 0) buffer Dqkv { STORE_T dqkv[]; };
layout(std430, binding = 1) writeonly buffer Delta { float delta[]; };
layout(std430, binding = 2) readonly buffer Qkv { STORE_T qkv[]; };
layout(std430, binding = 3) readonly buffer Y { STORE_T y[]; };
layout(std430, binding = 4) readonly buffer Lse { float lse[]; };
layout(std430, binding = 5) readonly buffer Dy { STORE_T dy[]; };

layout(push_constant) uniform Push { AttentionParams p; };

shared float keys[TILE * MAX_D];  // the tile's keys, row after row (16 KiB with the values: MAX_D 64)
shared float values[TILE * MAX_D];

void main() {
  uint T_pad = (p.T + TILE - 1u) / TILE * TILE;
  uint head = gl_WorkGroupID.x * TILE / T_pad;  // b * H + h
  uint t0 = gl_WorkGroupID.x * TILE % T_pad;    // the workgroup's first query row
  uint t = t0 + gl_LocalInvocationID.x;
  uint b = head / p.H, h = head % p.H, C = p.H * p.D;
  bool valid = t < p.T;
  float q[MAX_D], g[MAX_D], dq[MAX_D];
  float d_t = 0.0;
  for (uint d = 0u; d < p.D; ++d) {
    q[d] = valid ? load_t(qkv[(b * p.T + t) * 3u * C + h * p.D + d]) : 0.0;
    g[d] = valid ? load_t(dy[(b * p.T + t) * C + h * p.D + d]) : 0.0;
    d_t += valid ? g[d] * load_t(y[(b * p.T + t) * C + h * p.D + d]) : 0.0;
    dq[d] = 0.0;
  }
  float lse_t = valid ? lse[head * p.T + t] : 0.0;
  uint last = min(p.T, t0 + TILE);  // one past the workgroup's last query row: the keys it needs
  for (uint u0 = 0u; u0 < last; u0 += TILE) {
    uint u = u0 + gl_LocalInvocationID.x;  // the key and value row this invocation copies
    for (uint d = 0u; d < p.D; ++d) {
      keys[gl_LocalInvocationID.x * p.D + d] = u < p.T ? load_t(qkv[(b * p.T + u) * 3u * C + C + h * p.D + d]) : 0.0;
      values[gl_LocalInvocationID.x * p.D + d] =
          u < p.T ? load_t(qkv[(b * p.T + u) * 3u * C + 2u * C + h * p.D + d]) : 0.0;
    }
    barrier();
    if (valid && u0 <= t) {
      uint n = min(TILE, t + 1u - u0);  // keys u0 .. u0 + n - 1 are at or before this row
      for (uint c = 0u; c < n; ++c) {
        float dot_qk = 0.0, dot_gv = 0.0;
        for (uint d = 0u; d < p.D; ++d) {
          dot_qk += q[d] * keys[c * p.D + d];
          dot_gv += g[d] * values[c * p.D + d];
        }
        float ds = exp(dot_qk * p.scale - lse_t) * (dot_gv - d_t) * p.scale;
        for (uint d = 0u; d < p.D; ++d) dq[d] += ds * keys[c * p.D + d];
      }
    }
    barrier();  // the tile is read by every row before the next one overwrites it
  }
  if (!valid) return;
  for (uint d = 0u; d < p.D; ++d) dqkv[(b * p.T + t) * 3u * C + h * p.D + d] = store_t(dq[d]);
  delta[head * p.T + t] = d_t;
}
