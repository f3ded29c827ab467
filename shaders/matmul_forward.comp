// matmul_forward: out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)); preact (B,OC) keeps the value before the
// activation for act_backward (hidden layers only). GEMM with M = B, N = OC, K = C. With add_bias 0 (--unfused) the
// epilogue does nothing: out = the plain sums, and bias_add and act_forward follow as kernels of their own.
// trainscope variants: texel (shaders/shaders.cmake compiles them; the kernel's record, KernelDef::gemm, says the
// same, which test_kernel_table checks)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

layout(std430, binding = 0) writeonly buffer Out { STORE_T out_[]; };
layout(std430, binding = 1) writeonly buffer Preact { STORE_T preact[]; };
layout(std430, binding = 4) readonly buffer Bias { STORE_T bias[]; };

layout(push_constant) uniform Push { MatmulForwardParams p; };

#define A_K_FAST 1
#define B_N_FAST 0
#if GEMM_TEXEL
layout(binding = 2) uniform TEXEL_SAMPLER inp;
layout(binding = 3) uniform TEXEL_SAMPLER weight;
#define A_TEX inp
#define B_TEX weight
#define A_LD p.C
#define B_LD p.C
#include "gemm_texel.glsl"
#else
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 2) readonly buffer Inp4 { STORE_VEC4 inp4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 3) readonly buffer Weight { STORE_T weight[]; };
layout(std430, binding = 3) readonly buffer Weight4 { STORE_VEC4 weight4[]; };
#define A_AT(m, k) load_t(inp[(m) * p.C + (k)])
#define B_AT(k, n) load_t(weight[(n) * p.C + (k)])
#define A_AT4(m, k) load4_t(inp4[((m) * p.C + (k)) / 4])
#define B_AT4(k, n) load4_t(weight4[((n) * p.C + (k)) / 4])
#include "gemm.glsl"
#endif
#include "activation.glsl"

void main() {
  gemm_tile(p.B, p.OC, p.C);
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint b = gemm_row(i);
    if (b >= p.B) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint o = gemm_col(j);
      if (o >= p.OC) continue;
      float v = acc[i * THREAD_N + j];
      if (p.add_bias != 0) v += load_t(bias[o]);
      if (p.apply_act != 0) {
        preact[b * p.OC + o] = store_t(v);
        v = act_forward(v, p.act);
      }
      out_[b * p.OC + o] = store_t(v);
    }
  }
}
