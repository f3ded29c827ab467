// A tiled GEMM in shared memory, shared by the three matmul kernels: acc (M,N) = sum over k of A(m,k) * B(k,n).
// Before including, a kernel defines:
//   A_AT(m, k), B_AT(k, n)  : loads from its buffers (called only inside the bounds M, N, K)
//   A_K_FAST, B_N_FAST      : 1 when consecutive k (for A) / n (for B) are consecutive in memory, so that neighbouring
//                             invocations load neighbouring addresses (coalesced loads)
// and after including calls gemm_tile(M, N, K) and reads acc[] for the outputs (gemm_row(i), gemm_col(j)).
//
// Tile sizes are specialization constants chosen by the host to fit maxComputeSharedMemorySize:
// a workgroup computes a TILE_M x TILE_N block of the output with (TILE_M/THREAD_M) x (TILE_N/THREAD_N) invocations,
// each owning a THREAD_M x THREAD_N register block, stepping through K in slices of TILE_K staged in shared memory.
// Shapes that are not multiples of a tile are exact: out-of-range loads read 0 and out-of-range outputs are skipped.

layout(constant_id = 0) const uint TILE_M = 64;
layout(constant_id = 1) const uint TILE_N = 64;
layout(constant_id = 2) const uint TILE_K = 16;
layout(constant_id = 3) const uint THREAD_M = 4;
layout(constant_id = 4) const uint THREAD_N = 4;
// local_size_x = TILE_N / THREAD_N, local_size_y = TILE_M / THREAD_M (ids 5 and 6, set by the host to match)
layout(local_size_x_id = 5, local_size_y_id = 6, local_size_z = 1) in;

shared float tile_a[TILE_K * TILE_M];  // k-major: tile_a[k * TILE_M + m]
shared float tile_b[TILE_K * TILE_N];  // k-major: tile_b[k * TILE_N + n]

float acc[THREAD_M * THREAD_N];

uint gemm_row(uint i) { return gl_WorkGroupID.y * TILE_M + gl_LocalInvocationID.y * THREAD_M + i; }
uint gemm_col(uint j) { return gl_WorkGroupID.x * TILE_N + gl_LocalInvocationID.x * THREAD_N + j; }

void gemm_tile(uint M, uint N, uint K) {
  const uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y;
  const uint tid = gl_LocalInvocationID.y * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint m0 = gl_WorkGroupID.y * TILE_M;
  const uint n0 = gl_WorkGroupID.x * TILE_N;

  [[unroll]] for (uint i = 0; i < THREAD_M * THREAD_N; ++i) acc[i] = 0.0;

  for (uint k0 = 0; k0 < K; k0 += TILE_K) {
    // Stage the A slice (TILE_M x TILE_K) and the B slice (TILE_K x TILE_N); zero outside the matrix.
    for (uint e = tid; e < TILE_M * TILE_K; e += threads) {
#if A_K_FAST
      uint m = e / TILE_K, k = e % TILE_K;
#else
      uint k = e / TILE_M, m = e % TILE_M;
#endif
      uint gm = m0 + m, gk = k0 + k;
      tile_a[k * TILE_M + m] = (gm < M && gk < K) ? A_AT(gm, gk) : 0.0;
    }
    for (uint e = tid; e < TILE_K * TILE_N; e += threads) {
#if B_N_FAST
      uint k = e / TILE_N, n = e % TILE_N;
#else
      uint n = e / TILE_K, k = e % TILE_K;
#endif
      uint gk = k0 + k, gn = n0 + n;
      tile_b[k * TILE_N + n] = (gk < K && gn < N) ? B_AT(gk, gn) : 0.0;
    }
    // RAW on tile_a/tile_b: every invocation's staged values must be visible before any invocation reads them.
    barrier();
    for (uint k = 0; k < TILE_K; ++k) {
      float a[THREAD_M];
      float b[THREAD_N];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i) a[i] = tile_a[k * TILE_M + gl_LocalInvocationID.y * THREAD_M + i];
      [[unroll]] for (uint j = 0; j < THREAD_N; ++j) b[j] = tile_b[k * TILE_N + gl_LocalInvocationID.x * THREAD_N + j];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i)
        [[unroll]] for (uint j = 0; j < THREAD_N; ++j) acc[i * THREAD_N + j] = fma(a[i], b[j], acc[i * THREAD_N + j]);
    }
    // WAR on tile_a/tile_b: nobody may overwrite the tiles for the next slice while others still read this one.
    barrier();
  }
}
