// Causal multi-head attention on the CPU, naive and fused (cpu/attention.hpp).
#include "cpu/attention.hpp"
#include "cpu/attention_head.hpp"
#include "cpu/fast_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cpu {
namespace {

// The backward's recomputation for query row t of a head against keys u0 .. u0 + count - 1, packed transposed in
// `keys` and `values` (width n): p[c] = P(t, u0 + c) = exp(q_t . k_u * scale - lse_t), the probability from the
// forward's log-sum-exp; dp[c] = dy_t . v_u.
void probabilities(const Head& hd, const float* qkv, const float* dy, const float* lse, int t,
                   const std::vector<float>& keys, const std::vector<float>& values, int n, int count, float* p,
                   float* dp) {
  dots(qkv + hd.q(t), keys, hd.s.D, n, count, p);
  dots(dy + hd.out(t), values, hd.s.D, n, count, dp);
  const float scale = score_scale(hd.s), lse_t = lse[hd.stat(t)];
  for (int c = 0; c < count; ++c) p[c] = exp_approx(p[c] * scale - lse_t);  // vectorizes: no libm call
}

// A thread's buffers for query_tiles: a key block's keys and values transposed, and one query row's p and dp.
struct TileBuffers {
  std::vector<float> keys, values;
  std::vector<float> p = std::vector<float>(kAttentionKeyBlock), dp = std::vector<float>(kAttentionKeyBlock);
};

// The backward's walk over one head's causal tiles by query blocks, as the forward's: a block of queries against the
// blocks of keys up to it, each key block's keys and values transposed once; for each query row t of the block, the
// probabilities and dy . v of its keys u0 .. last - 1 recomputed (probabilities()), then row(t, u0, last, p, dp) with
// p[u - u0] and dp[u - u0]. Rows and keys in ascending order: every sum the callers make runs in that order.
template <typename Row>
void query_tiles(const Head& hd, const float* qkv, const float* dy, const float* lse, TileBuffers& b, Row row) {
  const int T = hd.s.T;
  for (int t0 = 0; t0 < T; t0 += kAttentionQueryBlock) {
    const int t1 = std::min(T, t0 + kAttentionQueryBlock);
    for (int u0 = 0; u0 < t1; u0 += kAttentionKeyBlock) {
      const int u1 = std::min(t1, u0 + kAttentionKeyBlock), n = u1 - u0;
      pack_transposed(hd, qkv, 1, u0, u1, b.keys);
      pack_transposed(hd, qkv, 2, u0, u1, b.values);
      for (int t = std::max(t0, u0); t < t1; ++t) {
        const int last = std::min(u1, t + 1);
        probabilities(hd, qkv, dy, lse, t, b.keys, b.values, n, last - u0, b.p.data(), b.dp.data());
        row(t, u0, last, b.p.data(), b.dp.data());
      }
    }
  }
}

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
  std::vector<float> keys, s(kAttentionKeyBlock);  // the key block, transposed; a row's scores against it
  for (int u0 = 0; u0 < t1; u0 += kAttentionKeyBlock) {
    const int u1 = std::min(t1, u0 + kAttentionKeyBlock), n = u1 - u0;
    pack_transposed(hd, qkv, 1, u0, u1, keys);
    for (int r = 0; r < rows; ++r) {
      const int t = t0 + r;
      if (u0 > t) continue;  // every key of this block is after this query
      const int last = std::min(u1, t + 1);  // keys u0..last-1 are at or before it
      dots(qkv + hd.q(t), keys, D, n, n, s.data());
      float block_max = none;
      for (int u = u0; u < last; ++u) block_max = std::max(block_max, s[size_t(u - u0)] *= scale);
      const float m_new = std::max(m[size_t(r)], block_max);
      // ~1e-38 while m is still -inf (exp_approx saturates), times the l and acc of 0 it scales
      const float correction = exp_approx(m[size_t(r)] - m_new);
      float* a = &acc[size_t(r) * size_t(D)];
      l[size_t(r)] *= correction;
      for (int d = 0; d < D; ++d) a[d] *= correction;
      for (int u = u0; u < last; ++u) s[size_t(u - u0)] = exp_approx(s[size_t(u - u0)] - m_new);  // vectorizes
      for (int u = u0; u < last; ++u) {
        l[size_t(r)] += s[size_t(u - u0)];
        axpy(s[size_t(u - u0)], qkv + hd.v(u), a, D);
      }
      m[size_t(r)] = m_new;
    }
  }
  for (int r = 0; r < rows; ++r) {
    const float inv = 1.0f / l[size_t(r)];
    for (int d = 0; d < D; ++d) y[hd.out(t0 + r) + size_t(d)] = acc[size_t(r) * size_t(D) + size_t(d)] * inv;
    lse[hd.stat(t0 + r)] = m[size_t(r)] + log_of(l[size_t(r)]);
  }
}

}  // namespace

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
    TileBuffers buffers;
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      zero_head(hd, dqkv);
      for (int t = 0; t < s.T; ++t) delta[size_t(t)] = dot(dy + hd.out(t), y + hd.out(t), s.D);
      query_tiles(hd, qkv, dy, lse, buffers, [&](int t, int u0, int last, const float* p, const float* dp) {
        for (int u = u0; u < last; ++u) {
          const size_t c = size_t(u - u0);
          const float ds = p[c] * (dp[c] - delta[size_t(t)]) * scale;
          axpy(p[c], dy + hd.out(t), dqkv + hd.v(u), s.D);
          axpy(ds, qkv + hd.k(u), dqkv + hd.q(t), s.D);
          axpy(ds, qkv + hd.q(t), dqkv + hd.k(u), s.D);
        }
      });
    }
  });
}

void attention_backward_dq(const AttentionShape& s, const float* qkv, const float* y, const float* lse,
                           const float* dy, float* dqkv, float* delta, ThreadPool& pool) {
  const float scale = score_scale(s);
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    TileBuffers buffers;
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      for (int t = 0; t < s.T; ++t) {
        std::fill_n(dqkv + hd.q(t), s.D, 0.0f);
        delta[hd.stat(t)] = dot(dy + hd.out(t), y + hd.out(t), s.D);
      }
      // Each query row's dq summed over its keys in order.
      query_tiles(hd, qkv, dy, lse, buffers, [&](int t, int u0, int last, const float* p, const float* dp) {
        const float d_t = delta[hd.stat(t)];
        for (int u = u0; u < last; ++u) {
          const size_t c = size_t(u - u0);
          const float ds = p[c] * (dp[c] - d_t) * scale;
          axpy(ds, qkv + hd.k(u), dqkv + hd.q(t), s.D);
        }
      });
    }
  });
}

void attention_backward_dkv(const AttentionShape& s, const float* qkv, const float* lse, const float* delta,
                            const float* dy, float* dqkv, ThreadPool& pool) {
  const float scale = score_scale(s);
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    std::vector<float> keys, values, p(kAttentionKeyBlock), dp(kAttentionKeyBlock);
    for (size_t i = i0; i < i1; ++i) {
      const Head hd{s, int(i / size_t(s.H)), int(i % size_t(s.H))};
      for (int u = 0; u < s.T; ++u) {
        std::fill_n(dqkv + hd.k(u), s.D, 0.0f);
        std::fill_n(dqkv + hd.v(u), s.D, 0.0f);
      }
      // A block of keys at a time against every query at or after its first key (causal), queries in order: each
      // key's dk and dv summed over its queries in order; the block's rows of dk and dv stay in the cache.
      for (int u0 = 0; u0 < s.T; u0 += kAttentionKeyBlock) {
        const int u1 = std::min(s.T, u0 + kAttentionKeyBlock), n = u1 - u0;
        pack_transposed(hd, qkv, 1, u0, u1, keys);
        pack_transposed(hd, qkv, 2, u0, u1, values);
        for (int t = u0; t < s.T; ++t) {
          const int last = std::min(u1, t + 1);
          probabilities(hd, qkv, dy, lse, t, keys, values, n, last - u0, p.data(), dp.data());
          const float d_t = delta[hd.stat(t)];
          for (int u = u0; u < last; ++u) {
            const size_t c = size_t(u - u0);
            axpy(p[c], dy + hd.out(t), dqkv + hd.v(u), s.D);
            axpy(p[c] * (dp[c] - d_t) * scale, qkv + hd.q(t), dqkv + hd.k(u), s.D);
          }
        }
      }
    }
  });
}

}  // namespace cpu
