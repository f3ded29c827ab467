// Causal multi-head attention on the CPU, naive and fused (cpu/attention.hpp).
#include "cpu/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cpu {
namespace {

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

float dot(const float* a, const float* b, int n) {
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// out[0..n) += scale * x[0..n)
void axpy(float scale, const float* x, float* out, int n) {
  for (int i = 0; i < n; ++i) out[i] += scale * x[i];
}

float score_scale(const AttentionShape& s) { return 1.0f / std::sqrt(static_cast<float>(s.D)); }

// Sets this head's columns of dq, dk and dv to zero (each head's task owns them: no other thread writes there).
void zero_head(const Head& hd, float* dqkv) {
  for (int t = 0; t < hd.s.T; ++t) {
    std::fill_n(dqkv + hd.q(t), hd.s.D, 0.0f);
    std::fill_n(dqkv + hd.k(t), hd.s.D, 0.0f);
    std::fill_n(dqkv + hd.v(t), hd.s.D, 0.0f);
  }
}

// The fused forward of one block of queries [t0, t1) of one head: key blocks up to its last query, each a tile of
// scores in `tile` folded into the running maximum m, sum l and output acc of every row (the online softmax).
void fused_query_block(const Head& hd, const float* qkv, int t0, int t1, float* y, float* lse) {
  const int D = hd.s.D, rows = t1 - t0;
  const float scale = score_scale(hd.s), none = -std::numeric_limits<float>::infinity();
  std::vector<float> m(size_t(rows), none), l(size_t(rows), 0.0f), acc(size_t(rows) * size_t(D), 0.0f);
  std::vector<float> tile(size_t(rows) * kAttentionKeyBlock);
  for (int u0 = 0; u0 < t1; u0 += kAttentionKeyBlock) {
    const int u1 = std::min(t1, u0 + kAttentionKeyBlock);
    for (int r = 0; r < rows; ++r) {
      const int t = t0 + r;
      float* s = &tile[size_t(r) * kAttentionKeyBlock];
      float block_max = none;
      for (int u = u0; u < u1; ++u) {
        s[u - u0] = u <= t ? dot(qkv + hd.q(t), qkv + hd.k(u), D) * scale : none;
        block_max = std::max(block_max, s[u - u0]);
      }
      if (block_max == none) continue;  // every key of this block is after this query
      const float m_new = std::max(m[size_t(r)], block_max);
      const float correction = std::exp(m[size_t(r)] - m_new);  // 0 while m is still -inf
      float* a = &acc[size_t(r) * size_t(D)];
      l[size_t(r)] *= correction;
      for (int d = 0; d < D; ++d) a[d] *= correction;
      for (int u = u0; u < u1 && u <= t; ++u) {
        const float p = std::exp(s[u - u0] - m_new);
        l[size_t(r)] += p;
        axpy(p, qkv + hd.v(u), a, D);
      }
      m[size_t(r)] = m_new;
    }
  }
  for (int r = 0; r < rows; ++r) {
    const float inv = 1.0f / l[size_t(r)];
    for (int d = 0; d < D; ++d) y[hd.out(t0 + r) + size_t(d)] = acc[size_t(r) * size_t(D) + size_t(d)] * inv;
    lse[hd.stat(t0 + r)] = m[size_t(r)] + std::log(l[size_t(r)]);
  }
}

}  // namespace

void attention_forward_naive(const AttentionShape& s, const float* qkv, float* att, float* y, ThreadPool& pool) {
  const float scale = score_scale(s);
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    std::vector<float> acc(size_t(s.D));
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      for (int t = 0; t < s.T; ++t) {
        float* row = att + hd.stat(t) * size_t(s.T);
        float max = -std::numeric_limits<float>::infinity(), sum = 0;
        for (int u = 0; u <= t; ++u) max = std::max(max, row[u] = dot(qkv + hd.q(t), qkv + hd.k(u), s.D) * scale);
        for (int u = 0; u <= t; ++u) sum += row[u] = std::exp(row[u] - max);
        const float inv = 1.0f / sum;
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int u = 0; u <= t; ++u) axpy(row[u] *= inv, qkv + hd.v(u), acc.data(), s.D);
        std::fill(row + t + 1, row + s.T, 0.0f);
        std::copy(acc.begin(), acc.end(), y + hd.out(t));
      }
    }
  });
}

void attention_backward_naive(const AttentionShape& s, const float* qkv, const float* att, const float* dy,
                              float* dqkv, ThreadPool& pool) {
  const float scale = score_scale(s);
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    std::vector<float> datt(size_t(s.T));
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      zero_head(hd, dqkv);
      for (int t = 0; t < s.T; ++t) {
        const float* row = att + hd.stat(t) * size_t(s.T);
        const float* g = dy + hd.out(t);
        float weighted = 0;
        for (int u = 0; u <= t; ++u) {
          datt[size_t(u)] = dot(g, qkv + hd.v(u), s.D);
          axpy(row[u], g, dqkv + hd.v(u), s.D);
          weighted += row[u] * datt[size_t(u)];
        }
        for (int u = 0; u <= t; ++u) {
          const float ds = row[u] * (datt[size_t(u)] - weighted) * scale;
          axpy(ds, qkv + hd.k(u), dqkv + hd.q(t), s.D);
          axpy(ds, qkv + hd.q(t), dqkv + hd.k(u), s.D);
        }
      }
    }
  });
}

void attention_forward_fused(const AttentionShape& s, const float* qkv, float* y, float* lse, ThreadPool& pool) {
  const size_t blocks = size_t((s.T + kAttentionQueryBlock - 1) / kAttentionQueryBlock);
  pool.parallel_for(size_t(s.B) * size_t(s.H) * blocks, 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      const size_t head = i / blocks;
      const int t0 = int(i % blocks) * kAttentionQueryBlock;
      fused_query_block(Head{s, int(head / size_t(s.H)), int(head % size_t(s.H))}, qkv, t0,
                        std::min(s.T, t0 + kAttentionQueryBlock), y, lse);
    }
  });
}

void attention_backward_fused(const AttentionShape& s, const float* qkv, const float* y, const float* lse,
                              const float* dy, float* dqkv, ThreadPool& pool) {
  const float scale = score_scale(s);
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    std::vector<float> delta(size_t(s.T));  // dy_t . y_t = sum over u of p dp (FlashAttention-2's D)
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      zero_head(hd, dqkv);
      for (int t = 0; t < s.T; ++t) delta[size_t(t)] = dot(dy + hd.out(t), y + hd.out(t), s.D);
      // Tile by tile, as the forward: a block of queries against the blocks of keys up to it.
      for (int t0 = 0; t0 < s.T; t0 += kAttentionQueryBlock) {
        const int t1 = std::min(s.T, t0 + kAttentionQueryBlock);
        for (int u0 = 0; u0 < t1; u0 += kAttentionKeyBlock) {
          const int u1 = std::min(t1, u0 + kAttentionKeyBlock);
          for (int t = t0; t < t1; ++t)
            for (int u = u0; u < u1 && u <= t; ++u) {
              const float p = std::exp(dot(qkv + hd.q(t), qkv + hd.k(u), s.D) * scale - lse[hd.stat(t)]);
              const float ds = p * (dot(dy + hd.out(t), qkv + hd.v(u), s.D) - delta[size_t(t)]) * scale;
              axpy(p, dy + hd.out(t), dqkv + hd.v(u), s.D);
              axpy(ds, qkv + hd.k(u), dqkv + hd.q(t), s.D);
              axpy(ds, qkv + hd.q(t), dqkv + hd.k(u), s.D);
            }
        }
      }
    }
  });
}

}  // namespace cpu
