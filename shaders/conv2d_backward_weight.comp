// conv2d_backward_weight: dweight (OC,KS,KS,C) = sum over the pixels (b, y, x) of dout (B,OH,OW,OC) [b,y,x,oc] x
// inp (B,H,W,C) [b, y+ky-pad, x+kx-pad, c], NHWC. An implicit GEMM (gemm.glsl's tiles): M = OC, N = KS*KS*C taps,
// K = B*OH*OW pixels, A (m, k) = dout [k, m] and B (k, n) = the input under tap n of pixel k (0 in the padding).
// Scalar loads (VEC = 1).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

layout(std430, binding = 0) writeonly buffer Dweight { STORE_T dweight[]; };
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };

layout(push_constant) uniform Push { Conv2dBackwardParams p; };

// Tap n = (ky, kx, c) of output pixel k = (b, y, x).
float input_tap(uint k, uint n) {
  uint x = k % p.OW, t = k / p.OW, y = t % p.OH, b = t / p.OH;
  uint c = n % p.C, nn = n / p.C, kx = nn % p.KS, ky = nn / p.KS;
  int iy = int(y + ky) - int(p.pad), ix = int(x + kx) - int(p.pad);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return load_t(inp[((b * p.H + uint(iy)) * p.W + uint(ix)) * p.C + c]);
}

#define A_K_FAST 0
#define B_N_FAST 1
#define A_AT(m, k) load_t(dout[(k) * p.OC + (m)])
#define B_AT(k, n) input_tap(k, n)
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"

void main() {
  const uint N = p.KS * p.KS * p.C;
  gemm_tile(p.OC, N, p.B * p.OH * p.OW);
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint o = gemm_row(i);
    if (o >= p.OC) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint n = gemm_col(j);
      if (n < N) dweight[o * N + n] = store_t(acc[i * THREAD_N + j]);
    }
  }
}
