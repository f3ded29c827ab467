// The naive form of causal multi-head attention on the CPU (cpu/attention.hpp): seven kernels, each a pass over the
// (B, H, T, T) matrix of scores kept in memory, as a framework without a fused kernel runs attention (scores = q k^T,
// softmax, times v, and the backward's four). Each (sequence, head) is one task of the pool, its sums in a fixed
// order, so that results are bit-identical on any number of threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/attention.hpp"
#include "cpu/attention_head.hpp"
#include "cpu/fast_math.hpp"

namespace cpu {
namespace {

// Runs fn(head) for every (sequence, head) of `s`, heads spread over the pool.
template <typename Fn>
void for_each_head(const AttentionShape& s, ThreadPool& pool, Fn fn) {
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) fn(Head{s, int(i / size_t(s.H)), int(i % size_t(s.H))});
  });
}

// Row t of a head's (T, T) block of att.
float* att_row(const Head& hd, float* att, int t) { return att + hd.stat(t) * size_t(hd.s.T); }
const float* att_row(const Head& hd, const float* att, int t) { return att + hd.stat(t) * size_t(hd.s.T); }

// One of q, k, v (part 0, 1, 2) of every row of a head, overwritten with 0 in dqkv: the columns a kernel owns.
void zero_part(const Head& hd, float* dqkv, int part) {
  for (int t = 0; t < hd.s.T; ++t) std::fill_n(dqkv + hd.q(t) + size_t(part * hd.s.C()), hd.s.D, 0.0f);
}

}  // namespace

void attention_naive_scores(const AttentionShape& s, const float* qkv, float* att, ThreadPool& pool) {
  const float scale = score_scale(s);
  for_each_head(s, pool, [&](const Head& hd) {
    std::vector<float> keys;
    pack_transposed(hd, qkv, 1, 0, s.T, keys);  // every key of the head, transposed
    for (int t = 0; t < s.T; ++t) {
      float* row = att_row(hd, att, t);
      dots(qkv + hd.q(t), keys, s.D, s.T, t + 1, row);  // keys 0..t: the panel's first t + 1 columns
      for (int u = 0; u <= t; ++u) row[u] *= scale;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_softmax(const AttentionShape& s, float* att, ThreadPool& pool) {
  for_each_head(s, pool, [&](const Head& hd) {
    for (int t = 0; t < s.T; ++t) {
      float* row = att_row(hd, att, t);
      float max = -std::numeric_limits<float>::infinity(), sum = 0;
      for (int u = 0; u <= t; ++u) max = std::max(max, row[u]);
      for (int u = 0; u <= t; ++u) row[u] = exp_approx(row[u] - max);  // vectorizes: no libm call
      for (int u = 0; u <= t; ++u) sum += row[u];
      const float inv = 1.0f / sum;
      for (int u = 0; u <= t; ++u) row[u] *= inv;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_values(const AttentionShape& s, const float* att, const float* qkv, float* y, ThreadPool& pool) {
  for_each_head(s, pool, [&](const Head& hd) {
    for (int t = 0; t < s.T; ++t) {
      const float* row = att_row(hd, att, t);
      float* out = y + hd.out(t);
      std::fill_n(out, s.D, 0.0f);
      for (int u = 0; u <= t; ++u) axpy(row[u], qkv + hd.v(u), out, s.D);
    }
  });
}

void attention_naive_dv(const AttentionShape& s, const float* att, const float* dy, float* dqkv, ThreadPool& pool) {
  for_each_head(s, pool, [&](const Head& hd) {
    zero_part(hd, dqkv, 2);
    for (int t = 0; t < s.T; ++t) {  // dv_u += P(t, u) dy_t, t ascending for every u
      const float* row = att_row(hd, att, t);
      for (int u = 0; u <= t; ++u) axpy(row[u], dy + hd.out(t), dqkv + hd.v(u), s.D);
    }
  });
}

void attention_naive_dscores(const AttentionShape& s, const float* qkv, const float* y, const float* dy, float* att,
                             ThreadPool& pool) {
  const float scale = score_scale(s);
  for_each_head(s, pool, [&](const Head& hd) {
    std::vector<float> values, dp(size_t(s.T));
    pack_transposed(hd, qkv, 2, 0, s.T, values);  // every value of the head, transposed
    for (int t = 0; t < s.T; ++t) {
      float* row = att_row(hd, att, t);
      const float w = dot(dy + hd.out(t), y + hd.out(t), s.D);  // sum over u of P(t, u) dP(t, u) = dy_t . y_t
      dots(dy + hd.out(t), values, s.D, s.T, t + 1, dp.data());  // dP(t, u) = dy_t . v_u
      for (int u = 0; u <= t; ++u) row[u] = row[u] * (dp[size_t(u)] - w) * scale;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_dq(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool) {
  for_each_head(s, pool, [&](const Head& hd) {
    for (int t = 0; t < s.T; ++t) {
      const float* row = att_row(hd, att, t);
      float* dq = dqkv + hd.q(t);
      std::fill_n(dq, s.D, 0.0f);
      for (int u = 0; u <= t; ++u) axpy(row[u], qkv + hd.k(u), dq, s.D);
    }
  });
}

void attention_naive_dk(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool) {
  for_each_head(s, pool, [&](const Head& hd) {
    zero_part(hd, dqkv, 1);
    for (int t = 0; t < s.T; ++t) {  // dk_u += dS(t, u) q_t, t ascending for every u
      const float* row = att_row(hd, att, t);
      for (int u = 0; u <= t; ++u) axpy(row[u], qkv + hd.q(t), dqkv + hd.k(u), s.D);
    }
  });
}

}  // namespace cpu
