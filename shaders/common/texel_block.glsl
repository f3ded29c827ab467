// The register block of the texel GEMMs (shaders/common/gemm_texel.glsl) and the texel convolutions
// (conv2d_*.comp with GEMM_TEXEL): the tile sizes as specialization constants, the accumulators of one invocation's
// THREAD_M x THREAD_N outputs, their rows and columns, one texel as floats, and the outer product that adds a k-step
// of VEC (or 1) into acc. Why texels and register blocks on software devices: gemm_texel.glsl's first comment.
//
// Before including, a kernel defines A_K_FAST and B_N_FAST (1 when consecutive k of A, consecutive n of B, are
// consecutive in memory): a texel holds VEC consecutive elements along an operand's contiguous dimension, so it spans
// VM rows of A (VEC where A is m-fast, else 1) and VN columns of B (VEC where B is n-fast, else 1).

layout(constant_id = 0) const uint TILE_M = 8;   // = local_size_y * THREAD_M (TEXEL_LANES_M: local_size_x)
layout(constant_id = 1) const uint TILE_N = 64;  // = local_size_x * THREAD_N (TEXEL_LANES_M: local_size_y)
layout(constant_id = 2) const uint TILE_K = 4;   // unused (the k step is VEC)
layout(constant_id = 3) const uint THREAD_M = 8;
layout(constant_id = 4) const uint THREAD_N = 8;
layout(constant_id = 7) const uint VEC = 4;      // elements per texel: 4 (RGBA views) or 1
layout(local_size_x_id = 5, local_size_y_id = 6, local_size_z = 1) in;

// Elements per texel along m (A) and n (B): VEC where that dimension is the contiguous one, else 1.
const uint VM = A_K_FAST != 0 ? 1 : VEC;
const uint VN = B_N_FAST != 0 ? VEC : 1;

float acc[THREAD_M * THREAD_N];

// One texel of an operand as floats (bf16: integer views of the bits, widened exactly as load_t does).
#if defined(DTYPE_BF16)
vec4 texel_load(usamplerBuffer s, uint i) {
  uvec4 u = texelFetch(s, int(i));
  return vec4(bf16_to_float(u.x), bf16_to_float(u.y), bf16_to_float(u.z), bf16_to_float(u.w));
}
#else
vec4 texel_load(samplerBuffer s, uint i) { return texelFetch(s, int(i)); }
#endif

#include "tile_row.glsl"
#if TEXEL_LANES_M
// The invocations along m: local_size_x = TILE_M / THREAD_M, local_size_y = TILE_N / THREAD_N (the host swaps them,
// gpu::Kernels), since llvmpipe packs a workgroup's invocations into SIMD lanes along x only: with x = 1 a vector
// would hold one invocation.
uint gemm_row(uint i) { return tile_row() * TILE_M + gl_LocalInvocationID.x * THREAD_M + i; }
uint gemm_col(uint j) {
  return (gl_WorkGroupID.x * (TILE_N / VN) + gl_LocalInvocationID.y + gl_WorkGroupSize.y * (j / VN)) * VN + j % VN;
}
#else
uint gemm_row(uint i) { return tile_row() * TILE_M + gl_LocalInvocationID.y * THREAD_M + i; }
// Neighbouring lanes take neighbouring texels: column group j / VN of lane x is texel x + LANES * (j / VN).
uint gemm_col(uint j) {
  return (gl_WorkGroupID.x * (TILE_N / VN) + gl_LocalInvocationID.x + gl_WorkGroupSize.x * (j / VN)) * VN + j % VN;
}
#endif

// The k-step's operands, filled by the caller: blk_a[i * 4 + s] = A(row i, k + s), blk_b[s * THREAD_N + j] = B(k + s,
// column j).
float blk_a[THREAD_M * 4];
float blk_b[4 * THREAD_N];

// acc (i, j) += sum over s < S of blk_a (i, s) * blk_b (s, j), in s order (S = VEC, or 1 for a remainder of K).
void block_fma(const uint S) {
  [[unroll]] for (uint s = 0; s < S; ++s)
    [[unroll]] for (uint i = 0; i < THREAD_M; ++i)
      [[unroll]] for (uint j = 0; j < THREAD_N; ++j)
        acc[i * THREAD_N + j] = fma(blk_a[i * 4 + s], blk_b[s * THREAD_N + j], acc[i * THREAD_N + j]);
}

void block_zero() { [[unroll]] for (uint i = 0; i < THREAD_M * THREAD_N; ++i) acc[i] = 0.0; }
