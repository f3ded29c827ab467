// A tiled GEMM in shared memory, shared by the three matmul kernels: acc (M,N) = sum over k of A(m,k) * B(k,n).
// The GEMM variant "tiled" (gpu/gemm_config.hpp), for GPUs. Before including, a kernel defines:
//   A_AT(m, k), B_AT(k, n)    : loads from its buffers (called only inside the bounds M, N, K)
//   A_AT4(m, k), B_AT4(k, n)  : 4 consecutive elements along the contiguous dimension, as a vec4 (VEC = 4 only)
//   A_K_FAST, B_N_FAST        : 1 when consecutive k (for A) / n (for B) are consecutive in memory
// and after including calls gemm_tile(M, N, K) and reads acc[] for the outputs (gemm_row(i), gemm_col(j)); or
// gemm_tile_range(M, N, k_begin, k_end) for the sum over k_begin <= k < k_end only (split-K: k_begin a multiple of 4,
// so that 4-wide loads along k stay whole).
//
// Tile sizes are specialization constants chosen by the host from the device's limits: a workgroup computes a
// TILE_M x TILE_N block of the output with (TILE_M/THREAD_M) x (TILE_N/THREAD_N) invocations, each owning THREAD_M x
// THREAD_N outputs, stepping through K in slices of TILE_K staged in shared memory.
//   - Vector loads (VEC = 4): each invocation loads 4 consecutive elements along the operand's contiguous dimension
//     at once; the host picks VEC = 4 only where the shapes keep every 4-group inside or outside the matrix.
//   - Double-buffered k-slices: the next slice is loaded from global memory into registers while the current one is
//     multiplied, then stored into the other half of shared memory: one barrier per slice.
//   - No bank conflicts: an invocation's outputs are strided by the workgroup size (gemm_row, gemm_col), so
//     neighbouring invocations read neighbouring words of a tile row; tile rows are padded by one word, so that the
//     transposing stores of a k-fast operand (consecutive invocations, consecutive k) fall into different banks.
// Shapes that are not multiples of a tile are exact: out-of-range loads read 0 and out-of-range outputs are skipped.

layout(constant_id = 0) const uint TILE_M = 64;
layout(constant_id = 1) const uint TILE_N = 64;
layout(constant_id = 2) const uint TILE_K = 16;
layout(constant_id = 3) const uint THREAD_M = 4;
layout(constant_id = 4) const uint THREAD_N = 4;
// local_size_x = TILE_N / THREAD_N, local_size_y = TILE_M / THREAD_M (ids 5 and 6, set by the host to match)
layout(local_size_x_id = 5, local_size_y_id = 6, local_size_z = 1) in;
layout(constant_id = 7) const uint VEC = 1;  // elements per global load: 1 or 4

const uint THREADS = (TILE_M / THREAD_M) * (TILE_N / THREAD_N);
const uint LDA = TILE_M + 1;  // padded row of a k-major tile
const uint LDB = TILE_N + 1;
const uint LOADS_A = (TILE_M * TILE_K / VEC + THREADS - 1) / THREADS;  // vector loads per invocation and slice
const uint LOADS_B = (TILE_K * TILE_N / VEC + THREADS - 1) / THREADS;

shared float tile_a[2 * TILE_K * LDA];  // two k-major slices: tile_a[buf * TILE_K * LDA + k * LDA + m]
shared float tile_b[2 * TILE_K * LDB];  // tile_b[buf * TILE_K * LDB + k * LDB + n]

float acc[THREAD_M * THREAD_N];
vec4 stage_a[LOADS_A];  // the next slice on its way from global to shared memory
vec4 stage_b[LOADS_B];

#include "tile_row.glsl"
uint gemm_row(uint i) { return tile_row() * TILE_M + gl_LocalInvocationID.y + i * gl_WorkGroupSize.y; }
uint gemm_col(uint j) { return gl_WorkGroupID.x * TILE_N + gl_LocalInvocationID.x + j * gl_WorkGroupSize.x; }

// Load number e of a slice: the tile coordinates (along the operand's slow and fast dimension) of its first element.
uvec2 slot_a(uint e) {
#if A_K_FAST
  return uvec2(e / (TILE_K / VEC), (e % (TILE_K / VEC)) * VEC);  // (m, k)
#else
  return uvec2((e % (TILE_M / VEC)) * VEC, e / (TILE_M / VEC));  // (m, k)
#endif
}
uvec2 slot_b(uint e) {
#if B_N_FAST
  return uvec2(e / (TILE_N / VEC), (e % (TILE_N / VEC)) * VEC);  // (k, n)
#else
  return uvec2((e % (TILE_K / VEC)) * VEC, e / (TILE_K / VEC));  // (k, n)
#endif
}

// Global -> registers: the slice at k0 of the workgroup's A rows and B columns; zero outside the matrix.
void load_slice(uint M, uint N, uint K, uint k0, uint tid) {
  const uint m0 = tile_row() * TILE_M, n0 = gl_WorkGroupID.x * TILE_N;
  [[unroll]] for (uint l = 0; l < LOADS_A; ++l) {
    uvec2 s = slot_a(tid + l * THREADS);
    uint gm = m0 + s.x, gk = k0 + s.y;
    bool inside = tid + l * THREADS < TILE_M * TILE_K / VEC && gm < M && gk < K;
    if (VEC == 4) stage_a[l] = inside ? A_AT4(gm, gk) : vec4(0.0);
    else stage_a[l] = vec4(inside ? A_AT(gm, gk) : 0.0);
  }
  [[unroll]] for (uint l = 0; l < LOADS_B; ++l) {
    uvec2 s = slot_b(tid + l * THREADS);
    uint gk = k0 + s.x, gn = n0 + s.y;
    bool inside = tid + l * THREADS < TILE_K * TILE_N / VEC && gk < K && gn < N;
    if (VEC == 4) stage_b[l] = inside ? B_AT4(gk, gn) : vec4(0.0);
    else stage_b[l] = vec4(inside ? B_AT(gk, gn) : 0.0);
  }
}

// Registers -> shared memory half `buf`, k-major.
void store_slice(uint buf, uint tid) {
  [[unroll]] for (uint l = 0; l < LOADS_A; ++l) {
    if (tid + l * THREADS >= TILE_M * TILE_K / VEC) continue;
    uvec2 s = slot_a(tid + l * THREADS);
    [[unroll]] for (uint v = 0; v < VEC; ++v) {
#if A_K_FAST
      tile_a[(buf * TILE_K + s.y + v) * LDA + s.x] = stage_a[l][v];
#else
      tile_a[(buf * TILE_K + s.y) * LDA + s.x + v] = stage_a[l][v];
#endif
    }
  }
  [[unroll]] for (uint l = 0; l < LOADS_B; ++l) {
    if (tid + l * THREADS >= TILE_K * TILE_N / VEC) continue;
    uvec2 s = slot_b(tid + l * THREADS);
    [[unroll]] for (uint v = 0; v < VEC; ++v) {
#if B_N_FAST
      tile_b[(buf * TILE_K + s.x) * LDB + s.y + v] = stage_b[l][v];
#else
      tile_b[(buf * TILE_K + s.x + v) * LDB + s.y] = stage_b[l][v];
#endif
    }
  }
}

// Loads check k against k_end (as the end of K), so a range ends exactly.
void gemm_tile_range(uint M, uint N, uint k_begin, uint k_end) {
  const uint tid = gl_LocalInvocationID.y * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < THREAD_M * THREAD_N; ++i) acc[i] = 0.0;
  load_slice(M, N, k_end, k_begin, tid);
  store_slice(0, tid);
  // RAW on the first slice: every invocation's stores must be visible before any invocation reads them.
  barrier();
  uint buf = 0;
  for (uint k0 = k_begin; k0 < k_end; k0 += TILE_K) {
    const bool more = k0 + TILE_K < k_end;
    if (more) load_slice(M, N, k_end, k0 + TILE_K, tid);  // in flight while this slice is multiplied
    for (uint k = 0; k < TILE_K; ++k) {
      float a[THREAD_M];
      float b[THREAD_N];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i)
        a[i] = tile_a[(buf * TILE_K + k) * LDA + gl_LocalInvocationID.y + i * gl_WorkGroupSize.y];
      [[unroll]] for (uint j = 0; j < THREAD_N; ++j)
        b[j] = tile_b[(buf * TILE_K + k) * LDB + gl_LocalInvocationID.x + j * gl_WorkGroupSize.x];
      [[unroll]] for (uint i = 0; i < THREAD_M; ++i)
        [[unroll]] for (uint j = 0; j < THREAD_N; ++j) acc[i * THREAD_N + j] = fma(a[i], b[j], acc[i * THREAD_N + j]);
    }
    // The other half was last read before the previous barrier, so it can be written now (no WAR with this slice).
    if (more) store_slice(buf ^ 1u, tid);
    // RAW: the next slice's stores before anyone reads them; WAR: this slice's reads before the next iteration
    // overwrites this half.
    barrier();
    buf ^= 1u;
  }
}

void gemm_tile(uint M, uint N, uint K) { gemm_tile_range(M, N, 0, K); }
