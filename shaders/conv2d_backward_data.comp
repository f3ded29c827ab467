// conv2d_backward_data: dinp (B,H,W,C) = the convolution of dout (B,OH,OW,OC) with the flipped kernel (stride 1), NHWC.
// An implicit GEMM: M = B*H*W input pixels, N = C, K = KS*KS*OC taps (ky, kx, oc) with
// A (m, k) = dout [b, y+pad-ky, x+pad-kx, oc] (0 outside the output) and B (k, n) = weight [oc, ky, kx, n].
// Every input pixel is one output of the GEMM: no scatter, no atomics. Tiled (scalar loads) or texel (GEMM_TEXEL:
// taps outer, output channels inner, VEC channels per texel) as conv2d_forward.comp says.
// trainscope variants: texel (shaders/shaders.cmake compiles them; the kernel's record, KernelDef::gemm, says the
// same, which test_kernel_table checks)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"
#define ROWS_IN_Z 1  // tile rows folded into z where the device needs it (tile_row.glsl)

layout(std430, binding = 0) writeonly buffer Dinp { STORE_T dinp[]; };

layout(push_constant) uniform Push { Conv2dBackwardParams p; };

#define A_K_FAST 1
#define B_N_FAST 1
#if GEMM_TEXEL
layout(binding = 1) uniform TEXEL_SAMPLER dout;
layout(binding = 2) uniform TEXEL_SAMPLER weight;
layout(std430, binding = 0) writeonly buffer Dinp4 { STORE_VEC4 dinp4[]; };  // the same buffer, 4 at a time
#define TEXEL_LANES_M 1
#include "texel_block.glsl"

void conv_gemm(uint M) {
  const uint OCV = p.OC / VEC, CV = p.C / VN, taps = p.KS * p.KS;
  block_zero();
  int y0[THREAD_M], x0[THREAD_M];  // the output pixel under tap (0, 0) of each row: (y + pad, x + pad)
  uint image[THREAD_M];            // the first row of the row's image in dout, b * OH
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = min(gemm_row(i), M - 1), t = m / p.W;
    x0[i] = int(m % p.W) + int(p.pad);
    y0[i] = int(t % p.H) + int(p.pad);
    image[i] = (t / p.H) * p.OH;
  }
  uint col[THREAD_N / VN];  // the texel of each column group within a row of weight, clamped into C
  [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) col[q] = min(gemm_col(q * VN) / VN, CV - 1);
  for (uint ky = 0; ky < p.KS; ++ky)
    for (uint kx = 0; kx < p.KS; ++kx) {
      uint at[THREAD_M];
      bool inside[THREAD_M];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
        int oy = y0[i] - int(ky), ox = x0[i] - int(kx);
        inside[i] = oy >= 0 && oy < int(p.OH) && ox >= 0 && ox < int(p.OW);
        at[i] = inside[i] ? ((image[i] + uint(oy)) * p.OW + uint(ox)) * OCV : 0;
      }
      const uint tap = ky * p.KS + kx;
      for (uint ov = 0; ov < OCV; ++ov) {
        [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
          vec4 t = texel_load(dout, at[i] + ov);
          [[unroll]] for (uint s = 0; s < VEC; ++s) blk_a[i * 4 + s] = inside[i] ? t[s] : 0.0;
        }
        [[unroll]] for (uint s = 0; s < VEC; ++s) {
          const uint row = ((ov * VEC + s) * taps + tap) * CV;  // weight [oc, ky, kx, .]
          [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) {
            vec4 t = texel_load(weight, row + col[q]);
            [[unroll]] for (uint r = 0; r < VN; ++r) blk_b[s * THREAD_N + q * VN + r] = t[r];
          }
        }
        block_fma(VEC);
      }
    }
}
#else
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Weight { STORE_T weight[]; };

float dout_tap(uint m, uint k) {
  uint x = m % p.W, t = m / p.W, y = t % p.H, b = t / p.H;
  uint oc = k % p.OC, kk = k / p.OC, kx = kk % p.KS, ky = kk / p.KS;
  int oy = int(y + p.pad) - int(ky), ox = int(x + p.pad) - int(kx);
  if (oy < 0 || oy >= int(p.OH) || ox < 0 || ox >= int(p.OW)) return 0.0;
  return load_t(dout[((b * p.OH + uint(oy)) * p.OW + uint(ox)) * p.OC + oc]);
}

float weight_tap(uint k, uint n) {
  uint oc = k % p.OC, kk = k / p.OC;  // kk = ky * KS + kx
  return load_t(weight[(oc * p.KS * p.KS + kk) * p.C + n]);
}

#define A_AT(m, k) dout_tap(m, k)
#define B_AT(k, n) weight_tap(k, n)
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"

void conv_gemm(uint M) { gemm_tile(M, p.C, p.KS * p.KS * p.OC); }
#endif

void main() {
  const uint M = p.B * p.H * p.W;
  if (M == 0 || p.C == 0) return;  // (the warm-up's empty dispatch: no pixel to decompose)
  conv_gemm(M);
#if GEMM_TEXEL
  if (p.C % 4 == 0) {  // 4 channels a store, as conv2d_forward.comp's epilogue4
    [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
      uint m = gemm_row(i);
      if (m >= M) continue;
      [[unroll]] for (uint q = 0; q < THREAD_N / 4; ++q) {
        uint c = gemm_col(q * 4), a = i * THREAD_N + q * 4;
        if (c < p.C) dinp4[(m * p.C + c) / 4] = store4_t(vec4(acc[a], acc[a + 1], acc[a + 2], acc[a + 3]));
      }
    }
    return;
  }
#endif
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = gemm_row(i);
    if (m >= M) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint c = gemm_col(j);
      if (c < p.C) dinp[m * p.C + c] = store_t(acc[i * THREAD_N + j]);
    }
  }
}
