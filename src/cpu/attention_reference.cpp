// The double references of causal multi-head attention (cpu/transformer_reference.hpp): the forward with its stored
// probabilities and log-sum-exp, its backward from the probabilities, and the fused backward's two kernels from the
// log-sum-exp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/transformer_reference.hpp"

namespace cpu {
namespace {

using Vec = std::vector<double>;

}  // namespace

void attention_reference(const AttentionShape& s, std::span<const double> qkv, std::span<double> y,
                         std::span<double> att, std::span<double> lse) {
  const int T = s.T, C = s.C(), H = s.H, D = s.D;
  const double scale = 1 / std::sqrt(double(D));
  for (int b = 0; b < s.B; ++b) {
    auto at = [&](int t, int part, int h, int d) {
      return qkv[(size_t(b) * size_t(T) + size_t(t)) * size_t(3 * C) + size_t(part * C + h * D + d)];
    };
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        double* row = &att[((size_t(b) * size_t(H) + size_t(h)) * size_t(T) + size_t(t)) * size_t(T)];
        double max = -INFINITY, sum = 0;
        for (int u = 0; u < T; ++u) row[u] = 0;
        for (int u = 0; u <= t; ++u) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += at(t, 0, h, d) * at(u, 1, h, d);
          row[u] = dot * scale;
          max = std::max(max, row[u]);
        }
        for (int u = 0; u <= t; ++u) sum += row[u] = std::exp(row[u] - max);
        for (int u = 0; u <= t; ++u) row[u] /= sum;
        if (!lse.empty()) lse[(size_t(b) * size_t(H) + size_t(h)) * size_t(T) + size_t(t)] = max + std::log(sum);
        for (int d = 0; d < D; ++d) {
          double v = 0;
          for (int u = 0; u <= t; ++u) v += row[u] * at(u, 2, h, d);
          y[(size_t(b) * size_t(T) + size_t(t)) * size_t(C) + size_t(h * D + d)] = v;
        }
      }
  }
}

void attention_backward_reference(const AttentionShape& s, std::span<const double> qkv, std::span<const double> att,
                                  std::span<const double> dy, std::span<double> dqkv) {
  const int T = s.T, C = s.C(), H = s.H, D = s.D;
  const double scale = 1 / std::sqrt(double(D));
  std::fill(dqkv.begin(), dqkv.end(), 0.0);
  Vec datt(static_cast<size_t>(T));
  for (int b = 0; b < s.B; ++b) {
    auto at = [&](int t, int part, int h, int d) {
      return (size_t(b) * size_t(T) + size_t(t)) * size_t(3 * C) + size_t(part * C + h * D + d);
    };
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        const double* row = &att[((size_t(b) * size_t(H) + size_t(h)) * size_t(T) + size_t(t)) * size_t(T)];
        double weighted = 0;
        for (int u = 0; u <= t; ++u) {
          datt[size_t(u)] = 0;
          for (int d = 0; d < D; ++d) {
            const double g = dy[(size_t(b) * size_t(T) + size_t(t)) * size_t(C) + size_t(h * D + d)];
            datt[size_t(u)] += g * qkv[at(u, 2, h, d)];
            dqkv[at(u, 2, h, d)] += row[u] * g;
          }
          weighted += row[u] * datt[size_t(u)];
        }
        for (int u = 0; u <= t; ++u) {
          const double dscore = row[u] * (datt[size_t(u)] - weighted) * scale;
          for (int d = 0; d < D; ++d) {
            dqkv[at(t, 0, h, d)] += dscore * qkv[at(u, 1, h, d)];
            dqkv[at(u, 1, h, d)] += dscore * qkv[at(t, 0, h, d)];
          }
        }
      }
  }
}

namespace {

// One (sequence, head) of the fused backward's references: where its q, k, v (part 0, 1, 2 of qkv or dqkv), its rows
// of y and dy, and its statistics (lse, delta) are; P(t, u) recomputed from the log-sum-exp.
struct LseHead {
  const AttentionShape& s;
  std::span<const double> qkv, lse;
  int b, h;
  size_t at(int t, int part, int d) const {
    return (size_t(b) * size_t(s.T) + size_t(t)) * size_t(3 * s.C()) + size_t(part * s.C() + h * s.D + d);
  }
  size_t out(int t, int d) const { return (size_t(b) * size_t(s.T) + size_t(t)) * size_t(s.C()) + size_t(h * s.D + d); }
  size_t stat(int t) const { return (size_t(b) * size_t(s.H) + size_t(h)) * size_t(s.T) + size_t(t); }
  double prob(int t, int u) const {  // exp(q_t . k_u / sqrt(D) - lse_t)
    double dot = 0;
    for (int d = 0; d < s.D; ++d) dot += qkv[at(t, 0, d)] * qkv[at(u, 1, d)];
    return std::exp(dot / std::sqrt(double(s.D)) - lse[stat(t)]);
  }
  double dprob(std::span<const double> dy, int t, int u) const {  // dy_t . v_u
    double dot = 0;
    for (int d = 0; d < s.D; ++d) dot += dy[out(t, d)] * qkv[at(u, 2, d)];
    return dot;
  }
};

}  // namespace

void attention_backward_dq_reference(const AttentionShape& s, std::span<const double> qkv,
                                     std::span<const double> y, std::span<const double> lse,
                                     std::span<const double> dy, std::span<double> dqkv, std::span<double> delta) {
  const double scale = 1 / std::sqrt(double(s.D));
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      const LseHead hd{s, qkv, lse, b, h};
      for (int t = 0; t < s.T; ++t) {
        double dt = 0;
        for (int d = 0; d < s.D; ++d) dt += dy[hd.out(t, d)] * y[hd.out(t, d)];
        delta[hd.stat(t)] = dt;
        for (int d = 0; d < s.D; ++d) dqkv[hd.at(t, 0, d)] = 0;
        for (int u = 0; u <= t; ++u) {
          const double ds = hd.prob(t, u) * (hd.dprob(dy, t, u) - dt) * scale;
          for (int d = 0; d < s.D; ++d) dqkv[hd.at(t, 0, d)] += ds * qkv[hd.at(u, 1, d)];
        }
      }
    }
}

void attention_backward_dkv_reference(const AttentionShape& s, std::span<const double> qkv,
                                      std::span<const double> lse, std::span<const double> delta,
                                      std::span<const double> dy, std::span<double> dqkv) {
  const double scale = 1 / std::sqrt(double(s.D));
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      const LseHead hd{s, qkv, lse, b, h};
      for (int u = 0; u < s.T; ++u) {
        for (int d = 0; d < s.D; ++d) dqkv[hd.at(u, 1, d)] = dqkv[hd.at(u, 2, d)] = 0;
        for (int t = u; t < s.T; ++t) {
          const double p = hd.prob(t, u), ds = p * (hd.dprob(dy, t, u) - delta[hd.stat(t)]) * scale;
          for (int d = 0; d < s.D; ++d) {
            dqkv[hd.at(u, 1, d)] += ds * qkv[hd.at(t, 0, d)];
            dqkv[hd.at(u, 2, d)] += p * dy[hd.out(t, d)];
          }
        }
      }
    }
}

}  // namespace cpu
