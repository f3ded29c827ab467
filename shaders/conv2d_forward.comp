// conv2d_forward: out (B,OH,OW,OC) = act(conv(inp (B,H,W,C), weight (OC,KS,KS,C)) + bias (OC)), NHWC, stride 1, zero
// padding p.pad; preact keeps the value before the activation (hidden layers). An implicit GEMM: M = B*OH*OW output
// pixels, N = OC, K = KS*KS*C taps, where A (m, k) is the input value under tap k of pixel m, gathered by index from
// inp (0 in the padding) instead of an im2col buffer, and B (k, n) = weight (n, k). The epilogue is matmul_forward's.
// Two GEMMs (gpu/gemm_config.hpp, conv_variant):
//   - tiled (gemm.glsl's shared-memory tiles, for GPUs): scalar loads, a patch's taps not being contiguous;
//   - texel (GEMM_TEXEL, texel_block.glsl's register blocks, for software devices): taps outer, channels inner, so the
//     pixel of each row is decomposed once per invocation and its tap's bounds checked once per tap, not per element;
//     VEC channels per texel where C and OC are multiples of 4.
// trainscope variants: texel (shaders/shaders.cmake compiles them; the kernel's record, KernelDef::gemm, says the
// same, which test_kernel_table checks)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
#define ROWS_IN_Z 1  // tile rows folded into z where the device needs it (tile_row.glsl)

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) writeonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 4) readonly buffer Bias { STORE_T bias[]; };

layout(push_constant) uniform Push { Conv2dForwardParams p; };

#define A_K_FAST 1
#define B_N_FAST 0
#if GEMM_TEXEL
layout(binding = 2) uniform TEXEL_SAMPLER inp;
layout(binding = 3) uniform TEXEL_SAMPLER weight;
layout(std430, binding = 0) writeonly buffer Out4 { STORE_VEC4 out4[]; };  // the same buffers, 4 at a time
layout(std430, binding = 1) writeonly buffer Preact4 { STORE_VEC4 preact4[]; };
layout(std430, binding = 4) readonly buffer Bias4 { STORE_VEC4 bias4[]; };
#define TEXEL_LANES_M 1
#include "texel_block.glsl"

void conv_gemm(uint M) {
  const uint CV = p.C / VEC;                 // texels per pixel of inp
  const uint row_texels = p.KS * p.KS * CV;  // texels per output channel of weight
  block_zero();
  int y0[THREAD_M], x0[THREAD_M];  // the input pixel under tap (0, 0) of each row (negative in the padding)
  uint image[THREAD_M];            // the first row of the row's image, b * H
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = min(gemm_row(i), M - 1), t = m / p.OW;
    x0[i] = int(m % p.OW) - int(p.pad);
    y0[i] = int(t % p.OH) - int(p.pad);
    image[i] = (t / p.OH) * p.H;
  }
  uint w_row[THREAD_N];
  [[unroll]] for (uint j = 0; j < THREAD_N; ++j) w_row[j] = min(gemm_col(j), p.OC - 1) * row_texels;
  for (uint ky = 0; ky < p.KS; ++ky)
    for (uint kx = 0; kx < p.KS; ++kx) {
      uint at[THREAD_M];
      bool inside[THREAD_M];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
        int iy = y0[i] + int(ky), ix = x0[i] + int(kx);
        inside[i] = iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W);
        at[i] = inside[i] ? ((image[i] + uint(iy)) * p.W + uint(ix)) * CV : 0;
      }
      const uint tap = (ky * p.KS + kx) * CV;
      for (uint cv = 0; cv < CV; ++cv) {
        [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
          vec4 t = texel_load(inp, at[i] + cv);
          [[unroll]] for (uint s = 0; s < VEC; ++s) blk_a[i * 4 + s] = inside[i] ? t[s] : 0.0;
        }
        [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
          vec4 t = texel_load(weight, w_row[j] + tap + cv);
          [[unroll]] for (uint s = 0; s < VEC; ++s) blk_b[s * THREAD_N + j] = t[s];
        }
        block_fma(VEC);
      }
    }
}
#include "activation.glsl"

// The epilogue 4 channels at a time, where OC is a multiple of 4: an invocation's THREAD_N columns are consecutive
// channels (kConvTexelTiles: one invocation across, so gemm_col(j) = its first column + j), and llvmpipe stores one
// lane at a time, so a quarter of the stores.
void epilogue4(uint M) {
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = gemm_row(i);
    if (m >= M) continue;
    [[unroll]] for (uint q = 0; q < THREAD_N / 4; ++q) {
      uint o = gemm_col(q * 4);  // a multiple of 4: the group is wholly inside OC or wholly outside
      if (o >= p.OC) continue;
      const uint a = i * THREAD_N + q * 4;
      vec4 v = vec4(acc[a], acc[a + 1], acc[a + 2], acc[a + 3]);
      if (p.add_bias != 0) v += load4_t(bias4[o / 4]);
      if (p.apply_act != 0) {
        preact4[(m * p.OC + o) / 4] = store4_t(v);
        v = act_forward(v, p.act);
      }
      out4[(m * p.OC + o) / 4] = store4_t(v);
    }
  }
}
#else
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 3) readonly buffer Weight { STORE_T weight[]; };

// Tap k = (ky, kx, c) of output pixel m = (b, y, x).
float input_tap(uint m, uint k) {
  uint x = m % p.OW, t = m / p.OW, y = t % p.OH, b = t / p.OH;
  uint c = k % p.C, kk = k / p.C, kx = kk % p.KS, ky = kk / p.KS;
  int iy = int(y + ky) - int(p.pad), ix = int(x + kx) - int(p.pad);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return load_t(inp[((b * p.H + uint(iy)) * p.W + uint(ix)) * p.C + c]);
}

#define A_AT(m, k) input_tap(m, k)
#define B_AT(k, n) load_t(weight[(n) * (p.KS * p.KS * p.C) + (k)])
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"

void conv_gemm(uint M) { gemm_tile(M, p.OC, p.KS * p.KS * p.C); }
#include "activation.glsl"
#endif

void main() {
  const uint M = p.B * p.OH * p.OW;
  if (M == 0 || p.OC == 0) return;  // (the warm-up's empty dispatch: no pixel to decompose)
  conv_gemm(M);
#if GEMM_TEXEL
  if (p.OC % 4 == 0) {
    epilogue4(M);
    return;
  }
#endif
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = gemm_row(i);
    if (m >= M) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint o = gemm_col(j);
      if (o >= p.OC) continue;
      float v = acc[i * THREAD_N + j];
      if (p.add_bias != 0) v += load_t(bias[o]);
      if (p.apply_act != 0) {
        preact[m * p.OC + o] = store_t(v);
        v = act_forward(v, p.act);
      }
      out_[m * p.OC + o] = store_t(v);
    }
  }
}
