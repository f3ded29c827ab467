// conv2d_backward_data: dinp (B,H,W,C) = the convolution of dout (B,OH,OW,OC) with the flipped kernel (stride 1), NHWC.
// An implicit GEMM (gemm.glsl's tiles): M = B*H*W input pixels, N = C, K = KS*KS*OC taps (ky, kx, oc) with
// A (m, k) = dout [b, y+pad-ky, x+pad-kx, oc] (0 outside the output) and B (k, n) = weight [oc, ky, kx, n].
// Every input pixel is one output of the GEMM: no scatter, no atomics. Scalar loads (VEC = 1).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

layout(std430, binding = 0) writeonly buffer Dinp { STORE_T dinp[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Weight { STORE_T weight[]; };

layout(push_constant) uniform Push { Conv2dBackwardParams p; };

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

#define A_K_FAST 1
#define B_N_FAST 1
#define A_AT(m, k) dout_tap(m, k)
#define B_AT(k, n) weight_tap(k, n)
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"

void main() {
  const uint M = p.B * p.H * p.W;
  gemm_tile(M, p.C, p.KS * p.KS * p.OC);
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint m = gemm_row(i);
    if (m >= M) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint c = gemm_col(j);
      if (c < p.C) dinp[m * p.C + c] = store_t(acc[i * THREAD_N + j]);
    }
  }
}
