// The rows of 2x2 max pooling with stride 2 (ops/max_pool_forward.cpp, ops/max_pool_backward.cpp), NHWC, always
// inlined so that each SIMD level's file compiles its own vector loop over the channels (elementwise_level.inc; the
// kernels call them through elementwise_loops()). Compiled for the portable build's baseline they were SSE2's 4 lanes:
// the CNN's max_pool_backward took 1.5x and max_pool_forward 1.2x a native build's time (2026-11-29, the 2-core EPYC,
// kernel tables of 3 runs: docs/benchmarks.md, "Eleventh session"). A maximum and a gradient are copies of one value,
// so every level gives the same bits. Only builtins inside (gemm_micro.hpp: nothing a level file instantiates may
// become the whole program's copy).
#pragma once
#include <cstddef>
#include <cstdint>

namespace cpu {

// out[x * C + c] = the first maximum, in the order (0,0), (0,1), (1,0), (1,1), of the window over input pixels 2x and
// 2x + 1 of the rows i0 and i1 (pixel p's channel c at p * C + c), for x < OW and c < C. A NaN first value stays
// (no comparison with it is true); a later NaN never wins.
[[gnu::always_inline]] inline void max_pool_row(float* __restrict out, const float* __restrict i0,
                                                const float* __restrict i1, size_t OW, size_t C) {
  for (size_t x = 0; x < OW; ++x) {
    const float *a = i0 + 2 * x * C, *b = i1 + 2 * x * C;
    float* o = out + x * C;
    for (size_t c = 0; c < C; ++c) {
      float m = a[c];
      if (a[C + c] > m) m = a[C + c];
      if (b[c] > m) m = b[c];
      if (b[C + c] > m) m = b[C + c];
      o[c] = m;
    }
  }
}

// One window's four input gradients over the C channels: o_k[c] = g[c] where input k holds the window's first maximum
// (max_pool_row's choice, made without branches: v1 wins over v0 if greater, v2 over both if greater than their
// max...), else +0. Separate arrays (restrict) and bitwise logic on all-ones masks and g's bits, so that the compiler
// vectorizes the loop over the channels for baseline x86-64 too: bool selects (w ? d : 0.0f) stayed a scalar loop
// with branches there ("control flow in loop"), 3x the AVX-512 build's time in a portable build.
[[gnu::always_inline]] inline void max_pool_window_gradients(float* __restrict o0, float* __restrict o1,
                                                             float* __restrict o2, float* __restrict o3,
                                                             const float* __restrict a0, const float* __restrict a1,
                                                             const float* __restrict a2, const float* __restrict a3,
                                                             const float* __restrict g, size_t C) {
  for (size_t c = 0; c < C; ++c) {
    const float v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];
    const uint32_t d = __builtin_bit_cast(uint32_t, g[c]);
    const float m01 = v1 > v0 ? v1 : v0, m012 = v2 > m01 ? v2 : m01;
    const uint32_t w3 = -uint32_t(v3 > m012), g2 = -uint32_t(v2 > m01), g1 = -uint32_t(v1 > v0);
    const uint32_t w2 = ~w3 & g2, w1 = ~w3 & ~g2 & g1, w0 = ~w3 & ~g2 & ~g1;  // the first maximum's order
    o0[c] = __builtin_bit_cast(float, d & w0);
    o1[c] = __builtin_bit_cast(float, d & w1);
    o2[c] = __builtin_bit_cast(float, d & w2);
    o3[c] = __builtin_bit_cast(float, d & w3);
  }
}

// The input gradients of one row of windows: rows d0 and d1 of dinp (pixels 2x and 2x + 1 for x < OW, C channels
// each) from the input rows i0 and i1 and the OW x C output gradients g, by max_pool_window_gradients.
[[gnu::always_inline]] inline void max_pool_gradient_row(float* d0, float* d1, const float* i0, const float* i1,
                                                         const float* g, size_t OW, size_t C) {
  for (size_t x = 0; x < OW; ++x) {
    const size_t at = 2 * x * C;
    max_pool_window_gradients(d0 + at, d0 + at + C, d1 + at, d1 + at + C, i0 + at, i0 + at + C, i1 + at,
                              i1 + at + C, g + x * C, C);
  }
}

}  // namespace cpu
