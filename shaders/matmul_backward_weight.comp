// matmul_backward_weight: dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C). GEMM with M = OC, N = C, K = B.
// SPLIT_K (the _splitk variants, gpu/gemm_config.hpp's choose_split_k): workgroup layer z sums only the batch rows
// [z * k_slice, (z + 1) * k_slice) and writes its fp32 partial product to binding 0, partials[z][OC][C]; the
// reduce (shaders/splitk/split_k_reduce.comp) then adds the layers in order and rounds once into dweight.
// trainscope variants: texel splitk (shaders/shaders.cmake compiles them; the kernel's record, KernelDef::gemm, says the
// same, which test_kernel_table checks)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "kernel_params.h"

#if SPLIT_K
layout(std430, binding = 0) writeonly buffer Partials { float partials[]; };
#else
layout(std430, binding = 0) writeonly buffer Dweight { STORE_T dweight[]; };
#endif
layout(push_constant) uniform Push { MatmulBackwardParams p; };

#define A_K_FAST 0
#define B_N_FAST 1
#if GEMM_TEXEL
layout(binding = 1) uniform TEXEL_SAMPLER dout;
layout(binding = 2) uniform TEXEL_SAMPLER inp;
#define A_TEX dout
#define B_TEX inp
#define A_LD p.OC
#define B_LD p.C
#include "gemm_texel.glsl"
#else
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 1) readonly buffer Dout4 { STORE_VEC4 dout4[]; };  // the same buffer, 4 at a time
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };
layout(std430, binding = 2) readonly buffer Inp4 { STORE_VEC4 inp4[]; };
#define A_AT(m, k) load_t(dout[(k) * p.OC + (m)])
#define B_AT(k, n) load_t(inp[(k) * p.C + (n)])
#define A_AT4(m, k) load4_t(dout4[((k) * p.OC + (m)) / 4])
#define B_AT4(k, n) load4_t(inp4[((k) * p.C + (n)) / 4])
#include "gemm.glsl"
#endif

void main() {
#if SPLIT_K
  const uint k_begin = gl_WorkGroupID.z * p.k_slice;
  gemm_tile_range(p.OC, p.C, k_begin, min(p.B, k_begin + p.k_slice));
  const uint layer = gl_WorkGroupID.z * p.OC * p.C;
#else
  gemm_tile(p.OC, p.C, p.B);
#endif
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint o = gemm_row(i);
    if (o >= p.OC) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint c = gemm_col(j);
      if (c >= p.C) continue;
#if SPLIT_K
      partials[layer + o * p.C + c] = acc[i * THREAD_N + j];
#else
      dweight[o * p.C + c] = store_t(acc[i * THREAD_N + j]);
#endif
    }
  }
}
