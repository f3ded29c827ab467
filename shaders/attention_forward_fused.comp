// attention_forward_fused: causal multi-head self-attention without the scores in memory (Milne & Gimelshein 2018,
// online softmax; Dao et al. 2022, FlashAttention).
//   y (B*T, C) = softmax(q k^T * scale, causal) v for every head; lse (B, H, T) = each row's log of the sum of
//   exp(score), fp32, for the backward (C = H * D; qkv (B*T, 3C): q, k, v side by side, head h at h*D of each)
// One invocation per query row; a workgroup is 32 consecutive rows of one (sequence, head) (the grid counts T rounded
// up to 32 per head). The workgroup walks the keys in tiles of 32 up to its last row: each invocation copies one key
// and one value row of the tile into shared memory, then every row folds the tile's scores into its running maximum,
// sum and output, in registers. The scores never leave the workgroup: the naive form writes and reads B*H*T*T of them.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
#define TILE 32
#define MAX_D 64
layout(local_size_x = TILE) in;

layout(std430, binding = 0) writeonly buffer Y { STORE_T y[]; };
layout(std430, binding = 1) writeonly buffer Lse { float lse[]; };
layout(std430, binding = 2) readonly buffer Qkv { STORE_T qkv[]; };

layout(push_constant) uniform Push { AttentionParams p; };

shared float keys[TILE * MAX_D];    // the tile's keys, row after row (16 KiB with the values: MAX_D 64)
shared float values[TILE * MAX_D];

void main() {
  uint T_pad = (p.T + TILE - 1u) / TILE * TILE;
  uint head = gl_WorkGroupID.x * TILE / T_pad;     // b * H + h
  uint t0 = gl_WorkGroupID.x * TILE % T_pad;       // the workgroup's first query row
  uint t = t0 + gl_LocalInvocationID.x;
  uint b = head / p.H, h = head % p.H, C = p.H * p.D;
  bool valid = t < p.T;
  float q[MAX_D], acc[MAX_D];
  for (uint d = 0u; d < p.D; ++d) {
    q[d] = valid ? load_t(qkv[(b * p.T + t) * 3u * C + h * p.D + d]) : 0.0;
    acc[d] = 0.0;
  }
  float m = -1.0 / 0.0, l = 0.0;
  uint last = min(p.T, t0 + TILE);  // one past the workgroup's last query row: the keys it needs
  for (uint u0 = 0u; u0 < last; u0 += TILE) {
    uint u = u0 + gl_LocalInvocationID.x;  // the key and value row this invocation copies
    for (uint d = 0u; d < p.D; ++d) {
      keys[gl_LocalInvocationID.x * p.D + d] = u < p.T ? load_t(qkv[(b * p.T + u) * 3u * C + C + h * p.D + d]) : 0.0;
      values[gl_LocalInvocationID.x * p.D + d] = u < p.T ? load_t(qkv[(b * p.T + u) * 3u * C + 2u * C + h * p.D + d]) : 0.0;
    }
    barrier();
    if (valid && u0 <= t) {
      uint n = min(TILE, t + 1u - u0);  // keys u0 .. u0 + n - 1 are at or before this row
      float tile_max = -1.0 / 0.0;
      float s[TILE];
      for (uint c = 0u; c < n; ++c) {
        float dot_qk = 0.0;
        for (uint d = 0u; d < p.D; ++d) dot_qk += q[d] * keys[c * p.D + d];
        s[c] = dot_qk * p.scale;
        tile_max = max(tile_max, s[c]);
      }
      float m_new = max(m, tile_max);
      float correction = exp(m - m_new);  // 0 while m is still -inf
      l *= correction;
      for (uint d = 0u; d < p.D; ++d) acc[d] *= correction;
      for (uint c = 0u; c < n; ++c) {
        float e = exp(s[c] - m_new);
        l += e;
        for (uint d = 0u; d < p.D; ++d) acc[d] += e * values[c * p.D + d];
      }
      m = m_new;
    }
    barrier();  // the tile is read by every row before the next one overwrites it
  }
  if (!valid) return;
  for (uint d = 0u; d < p.D; ++d) y[(b * p.T + t) * C + h * p.D + d] = store_t(acc[d] / l);
  lse[head * p.T + t] = m + log(l);
}
