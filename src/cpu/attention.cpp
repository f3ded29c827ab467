// The CPU's fused attention backward in one pass (cpu/attention.hpp, attention_backward_fused); the three kernels of
// the plan are in cpu/attention_fused.cpp.
#include "cpu/elementwise_loops.hpp"
#include "cpu/attention.hpp"
#include "cpu/attention_head.hpp"
#include "cpu/fast_math.hpp"

#include <algorithm>
#include <cmath>
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
  // at the CPU's SIMD level (elementwise_loops.hpp)
  exp_at_level(elementwise_loops(), p, count, [&](long c) { return p[c] * scale - lse_t; });
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

}  // namespace

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

}  // namespace cpu
