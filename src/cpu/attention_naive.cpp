// The naive form of causal multi-head attention on the CPU (cpu/attention.hpp): seven kernels, each a pass over the
// (B, H, T, T) matrix of scores kept in memory, as a framework without a fused kernel runs attention (scores = q k^T,
// softmax, times v, and the backward's four). The six products among them (q k^T, P v, dy v^T, P^T dy, dS k, dS^T q)
// run on the GEMM's micro-kernels (cpu/attention_tile.hpp), a head's block of kNaiveBlock rows at a time (its rows
// against the whole head, as a GEMM per head would): each (sequence, head, block) is one task of the pool, every
// output one fma chain in a fixed order, so that results are bit-identical on any number of threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/elementwise_loops.hpp"
#include "cpu/attention.hpp"
#include "cpu/attention_head.hpp"
#include "cpu/attention_tile.hpp"
#include "cpu/fast_math.hpp"
#include "cpu/per_thread.hpp"

namespace cpu {
namespace {

// Runs fn(head) for every (sequence, head) of `s`, heads spread over the pool.
template <typename Fn>
void for_each_head(const AttentionShape& s, ThreadPool& pool, Fn fn) {
  pool.parallel_for(size_t(s.B) * size_t(s.H), 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) fn(Head{s, int(i / size_t(s.H)), int(i % size_t(s.H))});
  });
}

constexpr int kNaiveBlock = 64;  // rows of att (queries, or keys for dv and dk) per task

// Row t of a head's (T, T) block of att.
float* att_row(const Head& hd, float* att, int t) { return att + hd.stat(t) * size_t(hd.s.T); }
const float* att_row(const Head& hd, const float* att, int t) { return att + hd.stat(t) * size_t(hd.s.T); }

// The thread's buffers for tile_product: the packed operands and the product.
// The thread's buffers for tile_product: the packed operands, the product, and a block of att with the entries after
// the diagonal set to 0 (the products read only u <= t of each row t, as a kernel of the plan must: its input's
// entries after the diagonal are whatever was there).
struct NaiveScratch {
  AlignedBuffer left, right;
  std::vector<float> c, masked;
  long ldc = 0;
};

NaiveScratch& scratch() {
  thread_local NaiveScratch* slot = nullptr;
  return per_thread(slot);
}

// c = a (rows x kc) · b (kc x cols) in the calling thread's scratch (row stride sc.ldc).
NaiveScratch& product(MatrixView a, MatrixView b, long rows, long kc, long cols) {
  NaiveScratch& sc = scratch();
  tile_product(tile_kernel(), a, b, rows, kc, cols, sc.left, sc.right, sc.c, sc.ldc);
  return sc;
}

// Rows [t0, t1) of a head's att, columns [u0, u1), into the scratch's `masked` (row stride u1 - u0), 0 where u > t.
const float* causal_block(const Head& hd, const float* att, int t0, int t1, int u0, int u1) {
  std::vector<float>& m = scratch().masked;
  const long n = u1 - u0;
  m.resize(size_t((t1 - t0) * n));
  for (int t = t0; t < t1; ++t) {
    const float* row = att_row(hd, att, t) + u0;
    float* out = &m[size_t((t - t0) * n)];
    const long keep = std::clamp<long>(t - u0 + 1, 0, n);
    std::copy_n(row, keep, out);
    std::fill(out + keep, out + n, 0.0f);
  }
  return m.data();
}

// The keys' rows [u0, u1) of one of v, k (part 2, 1) in dqkv: the sums over queries t >= u (t from u0 to T) of P(t, u)
// dy_t (att = P, from = dy, its row stride C) or dS(t, u) q_t (att = dS, from = q in qkv), as P^T dy or dS^T q.
void key_gradients(const Head& hd, const float* att, const float* from, long ld_from, int part, int u0, int u1,
                   float* dqkv) {
  const long T = hd.s.T, D = hd.s.D;
  const float* block = causal_block(hd, att, u0, int(T), u0, u1);  // (T - u0) x (u1 - u0)
  const NaiveScratch& sc = product(columns_at(block, u1 - u0), rows_at(from, ld_from), u1 - u0, T - u0, D);
  for (int u = u0; u < u1; ++u)
    std::copy_n(&sc.c[size_t((u - u0) * sc.ldc)], D, dqkv + hd.q(u) + size_t(part * hd.s.C()));
}

// The queries' rows [t0, t1) of out (row stride ld_out, at out_at(t)): the sums over keys u <= t of att(t, u) x_u
// (x: v or k in qkv), as P v or dS k over keys 0 .. t1 - 1 (with zeros after the diagonal).
template <typename At>
void query_sums(const Head& hd, const float* att, const float* x, int t0, int t1, At out_at) {
  const long D = hd.s.D;
  const float* block = causal_block(hd, att, t0, t1, 0, t1);  // (t1 - t0) x t1
  const NaiveScratch& sc = product(rows_at(block, t1), rows_at(x, 3 * hd.s.C()), t1 - t0, t1, D);
  for (int t = t0; t < t1; ++t) std::copy_n(&sc.c[size_t((t - t0) * sc.ldc)], D, out_at(t));
}

}  // namespace

void attention_naive_scores(const AttentionShape& s, const float* qkv, float* att, ThreadPool& pool) {
  const float scale = score_scale(s);
  const long ld3 = 3 * s.C();
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int t0, int t1) {
    const NaiveScratch& sc = product(rows_at(qkv + hd.q(t0), ld3), columns_at(qkv + hd.k(0), ld3), t1 - t0, s.D, t1);
    for (int t = t0; t < t1; ++t) {
      float* row = att_row(hd, att, t);
      const float* c = &sc.c[size_t((t - t0) * sc.ldc)];
      for (int u = 0; u <= t; ++u) row[u] = c[u] * scale;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_softmax(const AttentionShape& s, float* att, ThreadPool& pool) {
  const ElementwiseLoops& loops = elementwise_loops();
  for_each_head(s, pool, [&](const Head& hd) {
    for (int t = 0; t < s.T; ++t) {
      float* row = att_row(hd, att, t);
      float max = -std::numeric_limits<float>::infinity(), sum = 0;
      for (int u = 0; u <= t; ++u) max = std::max(max, row[u]);
      exp_at_level(loops, row, t + 1, [&](long u) { return row[u] - max; });  // at the CPU's level
      for (int u = 0; u <= t; ++u) sum += row[u];
      const float inv = 1.0f / sum;
      for (int u = 0; u <= t; ++u) row[u] *= inv;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_values(const AttentionShape& s, const float* att, const float* qkv, float* y, ThreadPool& pool) {
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int t0, int t1) {
    query_sums(hd, att, qkv + hd.v(0), t0, t1, [&](int t) { return y + hd.out(t); });
  });
}

void attention_naive_dv(const AttentionShape& s, const float* att, const float* dy, float* dqkv, ThreadPool& pool) {
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int u0, int u1) {
    key_gradients(hd, att, dy + hd.out(u0), s.C(), 2, u0, u1, dqkv);
  });
}

void attention_naive_dscores(const AttentionShape& s, const float* qkv, const float* y, const float* dy, float* att,
                             ThreadPool& pool) {
  const float scale = score_scale(s);
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int t0, int t1) {
    const NaiveScratch& sc =
        product(rows_at(dy + hd.out(t0), s.C()), columns_at(qkv + hd.v(0), 3 * s.C()), t1 - t0, s.D, t1);
    for (int t = t0; t < t1; ++t) {
      float* row = att_row(hd, att, t);
      const float* dp = &sc.c[size_t((t - t0) * sc.ldc)];  // dP(t, u) = dy_t . v_u
      const float w = dot(dy + hd.out(t), y + hd.out(t), s.D);  // sum over u of P(t, u) dP(t, u) = dy_t . y_t
      for (int u = 0; u <= t; ++u) row[u] = row[u] * (dp[u] - w) * scale;
      std::fill(row + t + 1, row + s.T, 0.0f);
    }
  });
}

void attention_naive_dq(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool) {
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int t0, int t1) {
    query_sums(hd, att, qkv + hd.k(0), t0, t1, [&](int t) { return dqkv + hd.q(t); });
  });
}

void attention_naive_dk(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool) {
  for_blocks(s, kNaiveBlock, pool, [&](const Head& hd, int u0, int u1) {
    key_gradients(hd, att, qkv + hd.q(u0), 3 * s.C(), 1, u0, u1, dqkv);
  });
}

}  // namespace cpu
