// The transformer's reference in double (cpu/transformer_reference.hpp): one sequence at a time, every tensor a
// row-major std::vector<double>, forward keeping what backward needs, backward in the reverse order.
#include "cpu/transformer_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "cpu/layernorm.hpp"
#include "cpu/ops/op.hpp"

namespace cpu {
namespace {

using Vec = std::vector<double>;
constexpr double kPi = 3.141592653589793;

[[noreturn]] void bad(const std::string& message) { throw core::Error(core::ErrorKind::InvalidArgument, message); }

// out (T, N) = in (T, K) W^T + b, W (N, K) row-major at w, b at bias (or none).
void linear(const Vec& in, int T, int K, const double* w, const double* bias, int N, Vec& out) {
  out.assign(size_t(T) * size_t(N), 0.0);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double sum = bias ? bias[n] : 0.0;
      for (int k = 0; k < K; ++k) sum += in[size_t(t) * size_t(K) + size_t(k)] * w[size_t(n) * size_t(K) + size_t(k)];
      out[size_t(t) * size_t(N) + size_t(n)] = sum;
    }
}

// The backward of linear: din (T, K) += dout W; dW (N, K) += dout^T in; dbias (N) += the sum of dout's rows.
void linear_backward(const Vec& dout, const Vec& in, int T, int K, const double* w, int N, Vec& din, double* dw,
                     double* dbias) {
  din.assign(size_t(T) * size_t(K), 0.0);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      const double g = dout[size_t(t) * size_t(N) + size_t(n)];
      if (dbias) dbias[n] += g;
      for (int k = 0; k < K; ++k) {
        din[size_t(t) * size_t(K) + size_t(k)] += g * w[size_t(n) * size_t(K) + size_t(k)];
        dw[size_t(n) * size_t(K) + size_t(k)] += g * in[size_t(t) * size_t(K) + size_t(k)];
      }
    }
}

// LayerNorm of each row of x (T, C) (layer_norm_reference), keeping what its backward needs.
struct Norm {
  Vec mean, rstd, out;
};
Norm layer_norm(const Vec& x, int T, int C, const double* g, const double* b) {
  Norm n{Vec(size_t(T)), Vec(size_t(T)), Vec(x.size())};
  layer_norm_reference(T, C, kLayerNormEps, x, {g, size_t(C)}, {b, size_t(C)}, n.out, n.mean, n.rstd);
  return n;
}

// Its backward, dx added to (the residual path's gradient is there already).
void layer_norm_backward(const Vec& dout, const Vec& x, const Norm& n, int T, int C, const double* g, Vec& dx,
                         double* dg, double* db) {
  Vec d(x.size());
  layer_norm_backward_reference(T, C, x, {g, size_t(C)}, n.mean, n.rstd, dout, d, {dg, size_t(C)}, {db, size_t(C)});
  for (size_t i = 0; i < d.size(); ++i) dx[i] += d[i];
}

// What one block keeps of its forward pass for the backward one.
struct BlockCache {
  Vec x;         // the residual stream in (T, C)
  Norm ln1;      // and its LayerNorm
  Vec qkv;       // (T, 3C)
  Vec att;       // (H, T, T): each row the softmax over the positions up to it (zero after it)
  Vec y;         // (T, C): the heads' outputs side by side
  Vec mid;       // the residual stream after attention (T, C)
  Norm ln2;
  Vec fc, gelu;  // (T, 4C): before and after the activation
};

// One block forward: x (the residual stream) in, out; `k` keeps what its backward needs.
Vec block_forward(const TransformerShape& s, const TransformerParams::Block& p, const double* w, int T, Vec x,
                  BlockCache& k) {
  const int C = s.embed, M = s.mlp();
  k.x = std::move(x);
  k.ln1 = layer_norm(k.x, T, C, w + p.ln1_g, w + p.ln1_b);
  linear(k.ln1.out, T, C, w + p.qkv_w, w + p.qkv_b, 3 * C, k.qkv);
  const AttentionShape a{1, T, s.heads, s.head_size()};
  k.y.assign(size_t(T) * size_t(C), 0.0);
  k.att.assign(size_t(s.heads) * size_t(T) * size_t(T), 0.0);
  attention_reference(a, k.qkv, k.y, k.att);
  Vec proj;
  linear(k.y, T, C, w + p.proj_w, w + p.proj_b, C, proj);
  k.mid = k.x;
  for (size_t i = 0; i < proj.size(); ++i) k.mid[i] += proj[i];
  k.ln2 = layer_norm(k.mid, T, C, w + p.ln2_g, w + p.ln2_b);
  linear(k.ln2.out, T, C, w + p.fc_w, w + p.fc_b, M, k.fc);
  k.gelu.resize(k.fc.size());
  for (size_t i = 0; i < k.fc.size(); ++i) k.gelu[i] = ops::ref_activation(k.fc[i], core::Activation::GELU);
  Vec out;
  linear(k.gelu, T, M, w + p.out_w, w + p.out_b, C, out);
  for (size_t i = 0; i < out.size(); ++i) out[i] += k.mid[i];
  return out;
}

// One block backward: dout, the gradient of its output, to the gradient of its input; parameter gradients into g.
Vec block_backward(const TransformerShape& s, const TransformerParams::Block& p, const double* w, int T,
                   const BlockCache& k, const Vec& dout, double* g) {
  const int C = s.embed, M = s.mlp();
  Vec dgelu, dh2, dy, dh1;
  linear_backward(dout, k.gelu, T, M, w + p.out_w, C, dgelu, g + p.out_w, g + p.out_b);
  for (size_t i = 0; i < dgelu.size(); ++i)
    dgelu[i] *= ops::ref_activation_derivative(k.fc[i], core::Activation::GELU);
  linear_backward(dgelu, k.ln2.out, T, C, w + p.fc_w, M, dh2, g + p.fc_w, g + p.fc_b);
  Vec dmid = dout;  // the residual path
  layer_norm_backward(dh2, k.mid, k.ln2, T, C, w + p.ln2_g, dmid, g + p.ln2_g, g + p.ln2_b);
  linear_backward(dmid, k.y, T, C, w + p.proj_w, C, dy, g + p.proj_w, g + p.proj_b);
  Vec dqkv(size_t(T) * size_t(3 * C), 0.0);
  attention_backward_reference({1, T, s.heads, s.head_size()}, k.qkv, k.att, dy, dqkv);
  linear_backward(dqkv, k.ln1.out, T, C, w + p.qkv_w, 3 * C, dh1, g + p.qkv_w, g + p.qkv_b);
  Vec dx = dmid;
  layer_norm_backward(dh1, k.x, k.ln1, T, C, w + p.ln1_g, dx, g + p.ln1_g, g + p.ln1_b);
  return dx;
}

void check(const TransformerShape& s, std::span<const double> params, const core::TokenBatch& batch) {
  if (params.size() != transformer_params(s).count)
    bad(fmt::format("{} parameters given for a transformer of {}", params.size(), transformer_params(s).count));
  if (batch.T < 1 || batch.T > s.context) bad(fmt::format("sequences of {} tokens, context {}", batch.T, s.context));
  for (int32_t id : batch.x)
    if (id < 0 || id >= s.vocab) bad(fmt::format("token {} outside the vocabulary 0..{}", id, s.vocab - 1));
  for (int32_t id : batch.y)
    if (id < 0 || id >= s.vocab) bad(fmt::format("target {} outside the vocabulary 0..{}", id, s.vocab - 1));
}

}  // namespace

void layer_norm_reference(int rows, int C, double eps, std::span<const double> x, std::span<const double> g,
                          std::span<const double> b, std::span<double> out, std::span<double> mean,
                          std::span<double> rstd) {
  for (int t = 0; t < rows; ++t) {
    const double* row = &x[size_t(t) * size_t(C)];
    double m = 0, var = 0;
    for (int c = 0; c < C; ++c) m += row[c];
    m /= C;
    for (int c = 0; c < C; ++c) var += (row[c] - m) * (row[c] - m);
    mean[size_t(t)] = m;
    rstd[size_t(t)] = 1 / std::sqrt(var / C + eps);
    for (int c = 0; c < C; ++c) out[size_t(t) * size_t(C) + size_t(c)] = (row[c] - m) * rstd[size_t(t)] * g[size_t(c)] + b[size_t(c)];
  }
}

void layer_norm_backward_reference(int rows, int C, std::span<const double> x, std::span<const double> g,
                                   std::span<const double> mean, std::span<const double> rstd,
                                   std::span<const double> dout, std::span<double> dx, std::span<double> dg,
                                   std::span<double> db) {
  for (int t = 0; t < rows; ++t) {
    const size_t at = size_t(t) * size_t(C);
    auto xhat = [&](int c) { return (x[at + size_t(c)] - mean[size_t(t)]) * rstd[size_t(t)]; };
    double mean_d = 0, mean_dx = 0;
    for (int c = 0; c < C; ++c) {
      const double dxhat = dout[at + size_t(c)] * g[size_t(c)];
      mean_d += dxhat;
      mean_dx += dxhat * xhat(c);
      dg[size_t(c)] += dout[at + size_t(c)] * xhat(c);
      db[size_t(c)] += dout[at + size_t(c)];
    }
    mean_d /= C;
    mean_dx /= C;
    for (int c = 0; c < C; ++c)
      dx[at + size_t(c)] = rstd[size_t(t)] * (dout[at + size_t(c)] * g[size_t(c)] - mean_d - xhat(c) * mean_dx);
  }
}

TransformerParams transformer_params(const TransformerShape& s) {
  if (s.vocab < 1 || s.context < 1 || s.embed < 1 || s.heads < 1 || s.layers < 1 || s.embed % s.heads != 0)
    bad(fmt::format("a transformer needs sizes of 1 or more and an embedding a multiple of the heads: vocab {}, "
                    "context {}, embed {}, heads {}, layers {}",
                    s.vocab, s.context, s.embed, s.heads, s.layers));
  const size_t V = size_t(s.vocab), T = size_t(s.context), C = size_t(s.embed), M = size_t(s.mlp());
  TransformerParams p;
  size_t at = 0;
  auto take = [&](size_t n) { return std::exchange(at, at + n); };
  p.wte = take(V * C);
  p.wpe = take(T * C);
  for (int l = 0; l < s.layers; ++l) {
    TransformerParams::Block b;
    b.ln1_g = take(C), b.ln1_b = take(C), b.qkv_w = take(3 * C * C), b.qkv_b = take(3 * C);
    b.proj_w = take(C * C), b.proj_b = take(C), b.ln2_g = take(C), b.ln2_b = take(C);
    b.fc_w = take(M * C), b.fc_b = take(M), b.out_w = take(C * M), b.out_b = take(C);
    p.blocks.push_back(b);
  }
  p.lnf_g = take(C);
  p.lnf_b = take(C);
  p.head = s.tied ? p.wte : take(V * C);
  p.count = at;
  return p;
}

std::vector<double> transformer_init(const TransformerShape& s, uint64_t seed) {
  const TransformerParams p = transformer_params(s);
  std::vector<double> w(p.count, 0.0);
  core::Pcg32 rng(seed);
  auto normal = [&](size_t at, size_t n, double sd) {  // Box-Muller: two uniforms in (0, 1] and [0, 1)
    for (size_t i = 0; i < n; ++i) {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      w[at + i] = sd * std::sqrt(-2 * std::log(u1)) * std::cos(2 * kPi * u2);
    }
  };
  const size_t V = size_t(s.vocab), T = size_t(s.context), C = size_t(s.embed), M = size_t(s.mlp());
  const double residual = 0.02 / std::sqrt(2.0 * s.layers);
  normal(p.wte, V * C, 0.02);
  normal(p.wpe, T * C, 0.02);
  for (const auto& b : p.blocks) {
    std::fill_n(w.begin() + long(b.ln1_g), C, 1.0);
    std::fill_n(w.begin() + long(b.ln2_g), C, 1.0);
    normal(b.qkv_w, 3 * C * C, 0.02);
    normal(b.proj_w, C * C, residual);
    normal(b.fc_w, M * C, 0.02);
    normal(b.out_w, C * M, residual);
  }
  std::fill_n(w.begin() + long(p.lnf_g), C, 1.0);
  if (!s.tied) normal(p.head, V * C, 0.02);
  return w;
}

TransformerResult transformer_step_reference(const TransformerShape& s, std::span<const double> params,
                                             const core::TokenBatch& batch, bool backward) {
  check(s, params, batch);
  const TransformerParams p = transformer_params(s);
  const int T = batch.T, C = s.embed, V = s.vocab;
  const double* w = params.data();
  double masked = 0;
  for (uint8_t m : batch.mask) masked += m;
  if (masked == 0) bad("a batch without a masked position has no loss");
  TransformerResult r;
  r.logits.assign(size_t(batch.B) * size_t(T) * size_t(V), 0.0);
  if (backward) r.grads.assign(p.count, 0.0);
  for (int b = 0; b < batch.B; ++b) {
    const size_t first = size_t(b) * size_t(T);
    Vec x(size_t(T) * size_t(C));
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        x[size_t(t) * size_t(C) + size_t(c)] = w[p.wte + size_t(batch.x[first + size_t(t)]) * size_t(C) + size_t(c)] +
                                               w[p.wpe + size_t(t) * size_t(C) + size_t(c)];
    std::vector<BlockCache> caches(p.blocks.size());
    for (size_t l = 0; l < p.blocks.size(); ++l) x = block_forward(s, p.blocks[l], w, T, std::move(x), caches[l]);
    const Norm lnf = layer_norm(x, T, C, w + p.lnf_g, w + p.lnf_b);
    Vec logits, dlogits(size_t(T) * size_t(V), 0.0);
    linear(lnf.out, T, C, w + p.head, nullptr, V, logits);
    std::copy(logits.begin(), logits.end(), r.logits.begin() + long(first) * V);
    for (int t = 0; t < T; ++t) {  // cross-entropy of the target, and its gradient softmax - onehot
      if (!batch.mask[first + size_t(t)]) continue;
      const double* row = &logits[size_t(t) * size_t(V)];
      double max = -INFINITY, sum = 0;
      for (int v = 0; v < V; ++v) max = std::max(max, row[v]);
      for (int v = 0; v < V; ++v) sum += std::exp(row[v] - max);
      const int target = batch.y[first + size_t(t)];
      r.loss += (std::log(sum) + max - row[target]) / masked;
      for (int v = 0; v < V; ++v)
        dlogits[size_t(t) * size_t(V) + size_t(v)] = (std::exp(row[v] - max) / sum - (v == target ? 1 : 0)) / masked;
    }
    if (!backward) continue;
    double* g = r.grads.data();
    Vec dx, dhf;
    linear_backward(dlogits, lnf.out, T, C, w + p.head, V, dhf, g + p.head, nullptr);
    dx.assign(size_t(T) * size_t(C), 0.0);
    layer_norm_backward(dhf, x, lnf, T, C, w + p.lnf_g, dx, g + p.lnf_g, g + p.lnf_b);
    for (size_t l = p.blocks.size(); l-- > 0;) dx = block_backward(s, p.blocks[l], w, T, caches[l], dx, g);
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c) {
        const double d = dx[size_t(t) * size_t(C) + size_t(c)];
        g[p.wte + size_t(batch.x[first + size_t(t)]) * size_t(C) + size_t(c)] += d;
        g[p.wpe + size_t(t) * size_t(C) + size_t(c)] += d;
      }
  }
  return r;
}

}  // namespace cpu
