// conv2d_forward: out (B,OH,OW,OC) = act(conv(inp (B,H,W,C), weight (OC,KS,KS,C)) + bias (OC)), NHWC, stride 1, zero
// padding p.pad; preact keeps the value before the activation (hidden layers). An implicit GEMM (gemm.glsl's tiles):
// M = B*OH*OW output pixels, N = OC, K = KS*KS*C taps, where A (m, k) is the input value under tap k of pixel m,
// gathered by index from inp (0 in the padding) instead of an im2col buffer, and B (k, n) = weight (n, k). The epilogue
// is matmul_forward's. Always scalar loads (VEC = 1, gpu::Kernels): a patch's 4 taps are not 4 contiguous values.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) writeonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 3) readonly buffer Weight { STORE_T weight[]; };
layout(std430, binding = 4) readonly buffer Bias { STORE_T bias[]; };

layout(push_constant) uniform Push { Conv2dForwardParams p; };

// Tap k = (ky, kx, c) of output pixel m = (b, y, x).
float input_tap(uint m, uint k) {
  uint x = m % p.OW, t = m / p.OW, y = t % p.OH, b = t / p.OH;
  uint c = k % p.C, kk = k / p.C, kx = kk % p.KS, ky = kk / p.KS;
  int iy = int(y + ky) - int(p.pad), ix = int(x + kx) - int(p.pad);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return load_t(inp[((b * p.H + uint(iy)) * p.W + uint(ix)) * p.C + c]);
}

#define A_K_FAST 1
#define B_N_FAST 0
#define A_AT(m, k) input_tap(m, k)
#define B_AT(k, n) load_t(weight[(n) * (p.KS * p.KS * p.C) + (k)])
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"
#include "activation.glsl"

void main() {
  const uint M = p.B * p.OH * p.OW;
  gemm_tile(M, p.OC, p.KS * p.KS * p.C);
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
