// matmul_backward_data: dinp (B,C) = dout (B,OC) · weight (OC,C). GEMM with M = B, N = C, K = OC.
// trainscope variants: texel (shaders/shaders.cmake compiles them; the kernel's record, KernelDef::gemm, says the
// same, which test_kernel_table checks)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

layout(std430, binding = 0) writeonly buffer Dinp { STORE_T dinp[]; };
layout(push_constant) uniform Push { MatmulBackwardParams p; };

#define A_K_FAST 1
#define B_N_FAST 1
#if GEMM_TEXEL
layout(binding = 1) uniform TEXEL_SAMPLER dout;
layout(binding = 2) uniform TEXEL_SAMPLER weight;
#define A_TEX dout
#define B_TEX weight
#define A_LD p.OC
#define B_LD p.C
#include "gemm_texel.glsl"
#else
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 1) readonly buffer Dout4 { STORE_VEC4 dout4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 2) readonly buffer Weight { STORE_T weight[]; };
layout(std430, binding = 2) readonly buffer Weight4 { STORE_VEC4 weight4[]; };
#define A_AT(m, k) load_t(dout[(m) * p.OC + (k)])
#define B_AT(k, n) load_t(weight[(k) * p.C + (n)])
#define A_AT4(m, k) load4_t(dout4[((m) * p.OC + (k)) / 4])
#define B_AT4(k, n) load4_t(weight4[((k) * p.C + (n)) / 4])
#include "gemm.glsl"
#endif

void main() {
  gemm_tile(p.B, p.C, p.OC);
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint b = gemm_row(i);
    if (b >= p.B) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint c = gemm_col(j);
      if (c < p.C) dinp[b * p.C + c] = store_t(acc[i * THREAD_N + j]);
    }
  }
}
