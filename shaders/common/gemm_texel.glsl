// The GEMM of the three matmul kernels for software Vulkan devices (lavapipe): acc (M,N) = sum over k of
// A(m,k) * B(k,n), each invocation holding a THREAD_M x THREAD_N block of outputs in registers, both operands read
// through uniform texel buffers, no shared memory and no barrier. The GEMM variant "texel" (gpu/gemm_config.hpp).
//
// Why (measured on lavapipe, Mesa 22.3, by sampling its JIT code): llvmpipe runs the invocations of a workgroup as
// the 8 lanes of one SIMD vector. Inside a loop it loads from a storage buffer or from shared memory one lane at a
// time, testing the lane's exec mask and the buffer's bounds for each (about 15 instructions per lane, 120 per
// loaded vector); a subgroup broadcast costs half that. A texel fetch instead loads the 8 lanes' texels with vector
// code and transposes them (46 instructions for an RGBA32F fetch: 32 floats). So every operand is read through a
// texel view, VEC (4 or 1) consecutive elements per texel along its contiguous dimension, and nothing else is
// loaded in the k loop. 512x512x512 forward, GFLOP per CPU-second of lavapipe's threads: 2.1 with the shared-memory
// tiles of gemm.glsl, 8.8 with subgroup broadcasts of 64-bit storage loads, 17-25 with this (the figures in
// docs/benchmarks.md). llvmpipe turns fma() into a multiply and an add, and spills accumulators beyond its 32
// vector registers; 8x8 outputs per invocation is the best block measured.
//
// Before including, a kernel declares its operands as texel buffers A_TEX and B_TEX of type TEXEL_SAMPLER
// (dtype.glsl) and defines:
//   A_K_FAST  1: A(m,k) is stored at m * A_LD + k;   0: at k * A_LD + m
//   B_N_FAST  1: B(k,n) is stored at k * B_LD + n;   0: at n * B_LD + k
//   A_LD, B_LD  the row length of the stored matrices, in elements
// With VEC = 4 (RGBA views) the host guarantees (gpu::Kernels): A_LD and B_LD multiples of 4, K a multiple of 4
// where an operand is k-fast, M a multiple of 4 where A is m-fast, N where B is n-fast. Edges are exact: reads are
// clamped into the matrix (their products land in outputs that are never stored), outputs outside are skipped.
// It offers what gemm.glsl offers: gemm_tile(M, N, K), gemm_tile_range(M, N, k_begin, k_end) (k_begin a multiple of
// VEC), acc[], gemm_row(i), gemm_col(j), THREAD_M, THREAD_N.

#include "texel_block.glsl"

// The texel index of each row block (A) and column block (B) this invocation reads, clamped into the matrix.
uint a_base[THREAD_M / VM];
uint b_base[THREAD_N / VN];

// k .. k + S - 1 (S = VEC, or 1 for a remainder of K) into acc.
void gemm_step(uint k, const uint S) {
#if A_K_FAST
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) {
    vec4 t = texel_load(A_TEX, a_base[i] + k / VEC);
    [[unroll]] for (uint s = 0; s < S; ++s) blk_a[i * 4 + s] = t[S == VEC ? s : k % VEC];
  }
#else
  [[unroll]] for (uint s = 0; s < S; ++s)
    [[unroll]] for (uint q = 0; q < THREAD_M / VM; ++q) {
      vec4 t = texel_load(A_TEX, (k + s) * (A_LD / VM) + a_base[q]);
      [[unroll]] for (uint r = 0; r < VM; ++r) blk_a[(q * VM + r) * 4 + s] = t[r];
    }
#endif
#if B_N_FAST
  [[unroll]] for (uint s = 0; s < S; ++s)
    [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) {
      vec4 t = texel_load(B_TEX, (k + s) * (B_LD / VN) + b_base[q]);
      [[unroll]] for (uint r = 0; r < VN; ++r) blk_b[s * THREAD_N + q * VN + r] = t[r];
    }
#else
  [[unroll]] for (uint j = 0; j < THREAD_N; ++j) {
    vec4 t = texel_load(B_TEX, b_base[j] + k / VEC);
    [[unroll]] for (uint s = 0; s < S; ++s) blk_b[s * THREAD_N + j] = t[S == VEC ? s : k % VEC];
  }
#endif
  block_fma(S);
}

void gemm_tile_range(uint M, uint N, uint k_begin, uint k_end) {
  block_zero();
#if A_K_FAST
  [[unroll]] for (uint i = 0; i < THREAD_M; ++i) a_base[i] = min(gemm_row(i), M - 1) * (A_LD / VEC);
#else
  [[unroll]] for (uint q = 0; q < THREAD_M / VM; ++q) a_base[q] = min(gemm_row(q * VM) / VM, M / VM - 1);
#endif
#if B_N_FAST
  [[unroll]] for (uint q = 0; q < THREAD_N / VN; ++q) b_base[q] = min(gemm_col(q * VN) / VN, N / VN - 1);
#else
  [[unroll]] for (uint j = 0; j < THREAD_N; ++j) b_base[j] = min(gemm_col(j), N - 1) * (B_LD / VEC);
#endif
  uint k = k_begin;
  for (; k + VEC <= k_end; k += VEC) gemm_step(k, VEC);
  // K % VEC != 0 only where no operand is k-fast (the host checks): one k at a time.
  for (; k < k_end; ++k) gemm_step(k, 1);
}

void gemm_tile(uint M, uint N, uint K) { gemm_tile_range(M, N, 0, K); }
