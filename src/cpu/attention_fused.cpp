// The fused attention's three kernels on the CPU (cpu/attention.hpp: attention_forward_fused, attention_backward_dq,
// attention_backward_dkv), tiled for the cache as FlashAttention is (Dao et al. 2022; its backward as FlashAttention-2,
// Dao 2023): a block of kAttentionQueryBlock queries against a block of kAttentionKeyBlock keys at a time, the tile's
// scores in a small buffer of the thread's own (16 KiB: never the T x T of a head), and every product of a tile (the
// scores q k^T, dP = dy v^T, P v, dS k, P^T dy, dS^T q) run by the GEMM's micro-kernels (cpu/attention_tile.hpp). Each
// output is summed in a fixed order by one thread (over key blocks, or query blocks, ascending), whatever the number of
// threads: results are bit-identical on any thread count.
#include <algorithm>
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

constexpr int kQb = kAttentionQueryBlock, kKb = kAttentionKeyBlock;

// A thread's buffers: packed operands (left: A of a product, right: B), the tile's scores or probabilities s and its
// dP or dS, the output blocks being summed (acc, acc2) and the forward's running maximum m and sum l per row.
struct Scratch {
  AlignedBuffer left[3], right[3];
  std::vector<float> s, ds, acc, acc2, m, l;
};

// Sized for the tiles of a head size of D under `tk`'s padding; lds and ldo are the row strides of s and ds (a key
// block wide) and of acc and acc2 (D wide). The outputs' first `rows` rows (padded) start at zero: only those of a
// short block, whose task at a context of 32 is about a microsecond of multiply-adds.
Scratch& scratch_for(const TileKernel& tk, long D, int rows, long& lds, long& ldo) {
  thread_local Scratch* slot = nullptr;
  Scratch& sc = per_thread(slot);
  constexpr int kBlock = std::max(kQb, kKb);  // tiles are queries by keys or keys by queries
  lds = tk.pad.cols(kBlock);
  ldo = tk.pad.cols(D);
  const size_t tile = size_t(tk.pad.rows(kBlock) * lds), out = size_t(tk.pad.rows(rows) * ldo);
  sc.s.resize(tile);
  sc.ds.resize(tile);
  sc.acc.assign(out, 0.0f);
  sc.acc2.assign(out, 0.0f);
  return sc;
}

// One tile: query rows t0 .. t0 + rows - 1 against keys u0 .. u0 + n - 1.
struct Tile {
  int t0, rows, u0, n;
  int valid(int r) const { return std::clamp(t0 + r - u0 + 1, 0, n); }  // row r's keys at or before its query
};

// The tiles of the forward and of dq are computed transposed, keys by queries: s = k q^T (n x rows), so that a
// query's running maximum, sum and probabilities are columns, which vectorize across the queries with no horizontal
// reduction, each query's terms still in key order; and so that P and dS, read as the left operand of P v and dS k,
// pack as a plain copy (pack_a's contiguous columns) instead of a transpose.
// Key u0 + k is at or before query t0 + i.
inline bool causal(const Tile& tile, int k, int i) { return tile.u0 + k <= tile.t0 + i; }

// The forward's online softmax over one transposed tile of scores (Milne & Gimelshein 2018): the scores scaled, each
// query's running maximum m and sum l updated, its output row acc rescaled, and s turned into exp(score - m) (0 after
// the diagonal) for P v. Each e^x runs over a whole row at the CPU's SIMD level (elementwise_loops.hpp: a portable
// build's own exp_approx is the slow software FMA), the masks applied after: the same bits as exp where it counts.
void online_softmax(const Tile& tile, float scale, long lds, long ldo, long D, Scratch& sc) {
  const int rows = tile.rows;
  const ElementwiseLoops& loops = elementwise_loops();
  float *m = sc.m.data(), *l = sc.l.data(), *m_new = m + rows, *correction = l + rows;
  std::copy_n(m, rows, m_new);
  for (int k = 0; k < tile.n; ++k) {
    float* s = &sc.s[size_t(k * lds)];
    for (int i = 0; i < rows; ++i) {
      s[i] *= scale;
      m_new[i] = causal(tile, k, i) ? std::max(m_new[i], s[i]) : m_new[i];
    }
  }
  // exp(m - m_new): 1 where the maximum stands (also while both are -inf), ~1e-38 times l = 0 where m was -inf
  exp_at_level(loops, correction, rows, [&](long i) { return m[i] - m_new[i]; });
  for (int i = 0; i < rows; ++i) correction[i] = m_new[i] == m[i] ? 1.0f : correction[i];
  for (int i = 0; i < rows; ++i) {
    float* acc = &sc.acc[size_t(i * ldo)];
    for (long d = 0; d < D; ++d) acc[d] *= correction[i];
    l[i] *= correction[i];
  }
  for (int k = 0; k < tile.n; ++k) {
    float* s = &sc.s[size_t(k * lds)];
    exp_at_level(loops, s, rows, [&](long i) { return s[i] - m_new[i]; });
    for (int i = 0; i < rows; ++i) s[i] = causal(tile, k, i) ? s[i] : 0.0f;
    for (int i = 0; i < rows; ++i) l[i] += s[i];  // each query's sum over its keys in order
  }
  std::copy_n(m_new, rows, m);
}

// The forward of one block of queries [t0, t1) of one head: each key block up to its last query a tile of scores
// (k q^T), folded into the queries' running maximum, sum and output by online_softmax, then acc += P v.
void forward_block(const TileKernel& tk, const Head& hd, const float* qkv, int t0, int t1, float* y, float* lse) {
  const long D = hd.s.D, ld3 = 3 * hd.s.C();
  const int rows = t1 - t0;
  long lds = 0, ldo = 0;
  Scratch& sc = scratch_for(tk, D, rows, lds, ldo);
  sc.m.assign(size_t(2 * rows), -std::numeric_limits<float>::infinity());  // m, then the tile's new maximum
  sc.l.assign(size_t(2 * rows), 0.0f);                                      // l, then the tile's correction
  const TileOperand qt = pack_right(tk, sc.right[0], columns_at(qkv + hd.q(t0), ld3), D, rows);
  for (int u0 = 0; u0 < t1; u0 += kKb) {
    const Tile tile{t0, rows, u0, std::min(t1, u0 + kKb) - u0};
    tile_multiply(tk, sc.s.data(), lds, pack_left(tk, sc.left[0], rows_at(qkv + hd.k(u0), ld3), tile.n, D), qt,
                  false);
    online_softmax(tile, score_scale(hd.s), lds, ldo, D, sc);
    const TileOperand p = pack_left(tk, sc.left[1], columns_at(sc.s.data(), lds), rows, tile.n);
    tile_multiply(tk, sc.acc.data(), ldo, p, pack_right(tk, sc.right[1], rows_at(qkv + hd.v(u0), ld3), tile.n, D),
                  true);
  }
  for (int r = 0; r < rows; ++r) {
    const float inv = 1.0f / sc.l[size_t(r)];
    for (long d = 0; d < D; ++d) y[hd.out(t0 + r) + size_t(d)] = sc.acc[size_t(r * ldo + d)] * inv;
    lse[hd.stat(t0 + r)] = sc.m[size_t(r)] + log_of(sc.l[size_t(r)]);
  }
}

// The backward's recomputation over one tile, from its scores q k^T in s and dy v^T in ds: s = P = exp(score * scale
// - lse_t) (0 after the diagonal), ds = dS = P (dP - delta_t) * scale (FlashAttention-2's dS = P (dP - D)).
void probabilities(const Tile& tile, const Head& hd, const float* lse, const float* delta, long lds, Scratch& sc) {
  const float scale = score_scale(hd.s);
  const ElementwiseLoops& loops = elementwise_loops();
  for (int r = 0; r < tile.rows; ++r) {
    float *p = &sc.s[size_t(r * lds)], *dp = &sc.ds[size_t(r * lds)];
    const int c = tile.valid(r);
    const float lse_t = lse[hd.stat(tile.t0 + r)], d_t = delta[hd.stat(tile.t0 + r)];
    exp_at_level(loops, p, c, [&](long j) { return p[j] * scale - lse_t; });  // at the CPU's level (online_softmax)
    std::fill(p + c, p + tile.n, 0.0f);
    for (int j = 0; j < tile.n; ++j) dp[j] = p[j] * (dp[j] - d_t) * scale;
  }
}

// The scores and dP of one tile (queries from packed q and dy, keys and values from packed k^T and v^T), then P and
// dS (probabilities()).
void recompute(const TileKernel& tk, const Tile& tile, const Head& hd, const TileOperand (&in)[4], const float* lse,
               const float* delta, long lds, Scratch& sc) {
  tile_multiply(tk, sc.s.data(), lds, in[0], in[2], false);   // q k^T
  tile_multiply(tk, sc.ds.data(), lds, in[1], in[3], false);  // dy v^T
  probabilities(tile, hd, lse, delta, lds, sc);
}

// dq's recomputation over one transposed tile, from k q^T in s and v dy^T in ds (keys by queries): s = P^T, ds =
// dS^T, as probabilities() computes them; lse and delta are the block's queries'.
void probabilities_transposed(const Tile& tile, float scale, const float* lse, const float* delta, long lds,
                              Scratch& sc) {
  const ElementwiseLoops& loops = elementwise_loops();
  for (int k = 0; k < tile.n; ++k) {
    float *p = &sc.s[size_t(k * lds)], *dp = &sc.ds[size_t(k * lds)];
    exp_at_level(loops, p, tile.rows, [&](long i) { return p[i] * scale - lse[i]; });  // (online_softmax)
    for (int i = 0; i < tile.rows; ++i) {
      p[i] = causal(tile, k, i) ? p[i] : 0.0f;
      dp[i] = p[i] * (dp[i] - delta[i]) * scale;
    }
  }
}

// dq of one block of queries [t0, t1) of one head, summed over the key blocks up to its last query (dq += dS k), and
// the block's delta.
void dq_block(const TileKernel& tk, const Head& hd, const float* qkv, const float* y, const float* lse,
              const float* dy, int t0, int t1, float* dqkv, float* delta) {
  const long D = hd.s.D, C = hd.s.C(), ld3 = 3 * C;
  const int rows = t1 - t0;
  long lds = 0, ldo = 0;
  Scratch& sc = scratch_for(tk, D, rows, lds, ldo);
  sc.m.resize(size_t(rows));  // the block's lse and delta, contiguous
  sc.l.resize(size_t(rows));
  for (int r = 0; r < rows; ++r) {
    sc.m[size_t(r)] = lse[hd.stat(t0 + r)];
    sc.l[size_t(r)] = delta[hd.stat(t0 + r)] = dot(dy + hd.out(t0 + r), y + hd.out(t0 + r), int(D));
  }
  const TileOperand qt = pack_right(tk, sc.right[0], columns_at(qkv + hd.q(t0), ld3), D, rows);
  const TileOperand dyt = pack_right(tk, sc.right[1], columns_at(dy + hd.out(t0), C), D, rows);
  for (int u0 = 0; u0 < t1; u0 += kKb) {
    const Tile tile{t0, rows, u0, std::min(t1, u0 + kKb) - u0};
    tile_multiply(tk, sc.s.data(), lds, pack_left(tk, sc.left[0], rows_at(qkv + hd.k(u0), ld3), tile.n, D), qt,
                  false);
    tile_multiply(tk, sc.ds.data(), lds, pack_left(tk, sc.left[0], rows_at(qkv + hd.v(u0), ld3), tile.n, D), dyt,
                  false);
    probabilities_transposed(tile, score_scale(hd.s), sc.m.data(), sc.l.data(), lds, sc);
    const TileOperand ds = pack_left(tk, sc.left[1], columns_at(sc.ds.data(), lds), rows, tile.n);
    tile_multiply(tk, sc.acc.data(), ldo, ds, pack_right(tk, sc.right[2], rows_at(qkv + hd.k(u0), ld3), tile.n, D),
                  true);
  }
  for (int r = 0; r < rows; ++r) std::copy_n(&sc.acc[size_t(r * ldo)], D, dqkv + hd.q(t0 + r));
}

// dk and dv of one block of keys [u0, u1) of one head, summed over the query blocks from its first key on (causal):
// dv += P^T dy, dk += dS^T q.
void dkv_block(const TileKernel& tk, const Head& hd, const float* qkv, const float* lse, const float* delta,
               const float* dy, int u0, int u1, float* dqkv) {
  const long D = hd.s.D, C = hd.s.C(), ld3 = 3 * C;
  const int n = u1 - u0, T = hd.s.T;
  long lds = 0, ldo = 0;
  Scratch& sc = scratch_for(tk, D, n, lds, ldo);
  TileOperand in[4] = {{},
                       {},
                       pack_right(tk, sc.right[0], columns_at(qkv + hd.k(u0), ld3), D, n),
                       pack_right(tk, sc.right[1], columns_at(qkv + hd.v(u0), ld3), D, n)};
  for (int t0 = u0 - u0 % kQb; t0 < T; t0 += kQb) {
    const Tile tile{t0, std::min(T, t0 + kQb) - t0, u0, n};
    in[0] = pack_left(tk, sc.left[0], rows_at(qkv + hd.q(t0), ld3), tile.rows, D);
    in[1] = pack_left(tk, sc.left[1], rows_at(dy + hd.out(t0), C), tile.rows, D);
    recompute(tk, tile, hd, in, lse, delta, lds, sc);
    const TileOperand pt = pack_left(tk, sc.left[2], columns_at(sc.s.data(), lds), n, tile.rows);
    tile_multiply(tk, sc.acc2.data(), ldo, pt, pack_right(tk, sc.right[2], rows_at(dy + hd.out(t0), C), tile.rows, D),
                  true);
    const TileOperand dst = pack_left(tk, sc.left[2], columns_at(sc.ds.data(), lds), n, tile.rows);
    tile_multiply(tk, sc.acc.data(), ldo, dst, pack_right(tk, sc.right[2], rows_at(qkv + hd.q(t0), ld3), tile.rows, D),
                  true);
  }
  for (int r = 0; r < n; ++r) {
    std::copy_n(&sc.acc[size_t(r * ldo)], D, dqkv + hd.k(u0 + r));
    std::copy_n(&sc.acc2[size_t(r * ldo)], D, dqkv + hd.v(u0 + r));
  }
}

}  // namespace

void attention_forward_fused(const AttentionShape& s, const float* qkv, float* y, float* lse, ThreadPool& pool) {
  const TileKernel tk = tile_kernel();
  for_blocks(s, kQb, pool, [&](const Head& hd, int t0, int t1) { forward_block(tk, hd, qkv, t0, t1, y, lse); });
}

void attention_backward_dq(const AttentionShape& s, const float* qkv, const float* y, const float* lse, const float* dy,
                           float* dqkv, float* delta, ThreadPool& pool) {
  const TileKernel tk = tile_kernel();
  for_blocks(s, kQb, pool,
             [&](const Head& hd, int t0, int t1) { dq_block(tk, hd, qkv, y, lse, dy, t0, t1, dqkv, delta); });
}

void attention_backward_dkv(const AttentionShape& s, const float* qkv, const float* lse, const float* delta,
                            const float* dy, float* dqkv, ThreadPool& pool) {
  const TileKernel tk = tile_kernel();
  for_blocks(s, kKb, pool,
             [&](const Head& hd, int u0, int u1) { dkv_block(tk, hd, qkv, lse, delta, dy, u0, u1, dqkv); });
}

}  // namespace cpu
