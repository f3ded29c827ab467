// The helpers both forms of the CPU's attention use (cpu/attention.cpp, cpu/attention_fused.cpp,
// cpu/attention_naive.cpp): where one head's rows are, the split of the heads' blocks of rows over the pool, dot
// products and axpy in fp32 in a fixed order, and a head's rows packed transposed so that one vector's dot products
// with all of them are loops over contiguous keys (which vectorize).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/thread_pool.hpp"
#include "cpu/transformer_reference.hpp"

namespace cpu {

// One head of one sequence: where its rows of q, k, v (in qkv), y, dy and dqkv are.
struct Head {
  const AttentionShape& s;
  int b, h;
  size_t row(int t) const { return size_t(b) * size_t(s.T) + size_t(t); }
  size_t q(int t) const { return row(t) * size_t(3 * s.C()) + size_t(h * s.D); }  // into qkv or dqkv
  size_t k(int t) const { return q(t) + size_t(s.C()); }
  size_t v(int t) const { return q(t) + size_t(2 * s.C()); }
  size_t out(int t) const { return row(t) * size_t(s.C()) + size_t(h * s.D); }  // into y or dy
  size_t stat(int t) const { return (size_t(b) * size_t(s.H) + size_t(h)) * size_t(s.T) + size_t(t); }  // lse
};

// Runs fn(head, first row, end row) over every (sequence, head, block of `block` rows), split over the pool.
template <typename Fn>
void for_blocks(const AttentionShape& s, int block, ThreadPool& pool, Fn fn) {
  const size_t blocks = size_t((s.T + block - 1) / block);
  pool.parallel_for(size_t(s.B) * size_t(s.H) * blocks, 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      const size_t head = i / blocks;
      const int r0 = int(i % blocks) * block;
      fn(Head{s, int(head / size_t(s.H)), int(head % size_t(s.H))}, r0, std::min(s.T, r0 + block));
    }
  });
}

inline float dot(const float* a, const float* b, int n) {
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// out[0..n) += scale * x[0..n)
inline void axpy(float scale, const float* x, float* out, int n) {
  for (int i = 0; i < n; ++i) out[i] += scale * x[i];
}

inline float score_scale(const AttentionShape& s) { return 1.0f / std::sqrt(static_cast<float>(s.D)); }

// Rows u0..u1-1 of one of q, k, v (part: 0, 1, 2) of a head, transposed into `panel` (D x n, n = u1 - u0): so that the
// dot products of one vector with all of them are loops over contiguous keys, which vectorize (a dot product over
// D features would end in a horizontal sum per key).
inline void pack_transposed(const Head& hd, const float* qkv, int part, int u0, int u1, std::vector<float>& panel) {
  const int n = u1 - u0, D = hd.s.D;
  panel.resize(size_t(D) * size_t(n));
  for (int u = u0; u < u1; ++u) {
    const float* x = qkv + hd.q(u) + size_t(part * hd.s.C());
    for (int d = 0; d < D; ++d) panel[size_t(d) * size_t(n) + size_t(u - u0)] = x[d];
  }
}

// out[c] = sum over d of x[d] * panel[d][c] for c < n (panel D x width, n <= width), d ascending: x against the
// first n packed rows.
inline void dots(const float* x, const std::vector<float>& panel, int D, int width, int n, float* out) {
  std::fill_n(out, n, 0.0f);
  for (int d = 0; d < D; ++d) {
    const float xd = x[d];
    const float* row = &panel[size_t(d) * size_t(width)];
    for (int c = 0; c < n; ++c) out[c] += xd * row[c];
  }
}

}  // namespace cpu
