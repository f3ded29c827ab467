// conv2d_backward_weight: dweight (OC,KS,KS,C) = sum over the pixels (b, y, x) of dout (B,OH,OW,OC) [b,y,x,oc] x
// inp (B,H,W,C) [b, y+ky-pad, x+kx-pad, c], NHWC. An implicit GEMM: M = OC, N = KS*KS*C taps, K = B*OH*OW pixels,
// A (m, k) = dout [k, m] and B (k, n) = the input under tap n of pixel k (0 in the padding). Tiled (scalar loads) or
// texel (GEMM_TEXEL: the pixels walked image by image, row by row, so that no index is divided inside the loop; VEC
// channels per texel) as conv2d_forward.comp says.
// SPLIT_K (the _splitk variants, gpu::choose_conv_split_k): workgroup layer z sums only the images
// [z * per, (z + 1) * per), per = ceil(B / slices) (PlanEntry::k_slice), into its fp32 partial product at binding 0,
// partials[z][OC][KS*KS*C]; shaders/splitk/split_k_reduce.comp adds the layers in order and rounds once into dweight.
// (Its output rows, OC, are few: never folded into z, which the slices use; tile_row.glsl.)
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

layout(push_constant) uniform Push { Conv2dBackwardParams p; };

#define A_K_FAST 0
#define B_N_FAST 1
#if GEMM_TEXEL
layout(binding = 1) uniform TEXEL_SAMPLER dout;
layout(binding = 2) uniform TEXEL_SAMPLER inp;
#define TEXEL_LANES_M 1
#include "texel_block.glsl"

void conv_gemm(uint N, uint b_begin, uint b_end) {
  const uint OCV = p.OC / VM, CV = p.C / VN;
  block_zero();
  uint row[THREAD_M / VM];  // the texel of each row group within a pixel of dout, clamped into OC
  [[unroll]] for (uint q = 0; q < THREAD_M / VM; ++q) row[q] = min(gemm_row(q * VM) / VM, OCV - 1);
  int dy[THREAD_N / VN], dx[THREAD_N / VN];  // each column group's tap as an offset, ky - pad and kx - pad
  uint c_texel[THREAD_N / VN];              // and its channels' texel within a pixel of inp
  [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) {
    uint n = min(gemm_col(q * VN), N - VN), tap = n / p.C;
    dy[q] = int(tap / p.KS) - int(p.pad);
    dx[q] = int(tap % p.KS) - int(p.pad);
    c_texel[q] = (n % p.C) / VN;
  }
  for (uint b = b_begin; b < b_end; ++b)
    for (uint y = 0; y < p.OH; ++y) {
      const uint k_row = (b * p.OH + y) * p.OW;  // the pixel (b, y, 0) of dout
      for (uint x = 0; x < p.OW; ++x) {
        [[unroll]] for (uint q = 0; q < THREAD_M / VM; ++q) {
          vec4 t = texel_load(dout, (k_row + x) * OCV + row[q]);
          [[unroll]] for (uint r = 0; r < VM; ++r) blk_a[(q * VM + r) * 4] = t[r];
        }
        [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) {
          int iy = int(y) + dy[q], ix = int(x) + dx[q];
          bool inside = iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W);
          vec4 t = texel_load(inp, inside ? ((b * p.H + uint(iy)) * p.W + uint(ix)) * CV + c_texel[q] : 0);
          [[unroll]] for (uint r = 0; r < VN; ++r) blk_b[q * VN + r] = inside ? t[r] : 0.0;
        }
        block_fma(1);
      }
    }
}
#else
layout(std430, binding = 1) readonly buffer Dout { STORE_T dout[]; };
layout(std430, binding = 2) readonly buffer Inp { STORE_T inp[]; };

// Tap n = (ky, kx, c) of output pixel k = (b, y, x).
float input_tap(uint k, uint n) {
  uint x = k % p.OW, t = k / p.OW, y = t % p.OH, b = t / p.OH;
  uint c = n % p.C, nn = n / p.C, kx = nn % p.KS, ky = nn / p.KS;
  int iy = int(y + ky) - int(p.pad), ix = int(x + kx) - int(p.pad);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return load_t(inp[((b * p.H + uint(iy)) * p.W + uint(ix)) * p.C + c]);
}

#define A_AT(m, k) load_t(dout[(k) * p.OC + (m)])
#define B_AT(k, n) input_tap(k, n)
#define A_AT4(m, k) vec4(0.0)  // never used: VEC = 1
#define B_AT4(k, n) vec4(0.0)
#include "gemm.glsl"

void conv_gemm(uint N, uint b_begin, uint b_end) {
  gemm_tile_range(p.OC, N, b_begin * p.OH * p.OW, b_end * p.OH * p.OW);  // (scalar loads: any k_begin)
}
#endif

void main() {
  const uint N = p.KS * p.KS * p.C;
  if (N == 0 || p.OC == 0) return;  // (the warm-up's empty dispatch)
#if SPLIT_K
  const uint per = (p.B + gl_NumWorkGroups.z - 1) / gl_NumWorkGroups.z, b_begin = min(p.B, gl_WorkGroupID.z * per);
  conv_gemm(N, b_begin, min(p.B, b_begin + per));  // an empty last slice writes zeros
  const uint layer = gl_WorkGroupID.z * p.OC * N;
#else
  conv_gemm(N, 0, p.B);
#endif
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    uint o = gemm_row(i);
    if (o >= p.OC) continue;
    [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
      uint n = gemm_col(j);
      if (n >= N) continue;
#if SPLIT_K
      partials[layer + o * N + n] = acc[i * THREAD_N + j];
#else
      dweight[o * N + n] = store_t(acc[i * THREAD_N + j]);
#endif
    }
  }
}
