// The double references of the naive attention's seven kernels (cpu/transformer_reference.hpp): the obvious loops,
// one (sequence, head, query row t, key u) at a time.
#include <algorithm>
#include <cmath>

#include "cpu/transformer_reference.hpp"

namespace cpu {
namespace {

// Where one (sequence b, head h)'s elements are: q, k, v (part 0, 1, 2) of row t in qkv or dqkv, row t of y or dy,
// and entry (t, u) of att.
struct NaiveHead {
  const AttentionShape& s;
  int b, h;
  size_t at(int t, int part, int d) const {
    return (size_t(b) * size_t(s.T) + size_t(t)) * size_t(3 * s.C()) + size_t(part * s.C() + h * s.D + d);
  }
  size_t out(int t, int d) const { return (size_t(b) * size_t(s.T) + size_t(t)) * size_t(s.C()) + size_t(h * s.D + d); }
  size_t att(int t, int u) const {
    return ((size_t(b) * size_t(s.H) + size_t(h)) * size_t(s.T) + size_t(t)) * size_t(s.T) + size_t(u);
  }
};

// fn(head) for every (sequence, head).
template <typename Fn>
void each_head(const AttentionShape& s, Fn fn) {
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) fn(NaiveHead{s, b, h});
}

double inv_sqrt_d(const AttentionShape& s) { return 1 / std::sqrt(double(s.D)); }

}  // namespace

void attention_naive_scores_reference(const AttentionShape& s, std::span<const double> qkv, std::span<double> att) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int t = 0; t < s.T; ++t)
      for (int u = 0; u < s.T; ++u) {
        double dot = 0;
        for (int d = 0; d < s.D && u <= t; ++d) dot += qkv[hd.at(t, 0, d)] * qkv[hd.at(u, 1, d)];
        att[hd.att(t, u)] = dot * inv_sqrt_d(s);  // 0 after the diagonal
      }
  });
}

void attention_naive_softmax_reference(const AttentionShape& s, std::span<double> att) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int t = 0; t < s.T; ++t) {
      double max = -INFINITY, sum = 0;
      for (int u = 0; u <= t; ++u) max = std::max(max, att[hd.att(t, u)]);
      for (int u = 0; u <= t; ++u) sum += std::exp(att[hd.att(t, u)] - max);
      for (int u = 0; u < s.T; ++u) att[hd.att(t, u)] = u <= t ? std::exp(att[hd.att(t, u)] - max) / sum : 0;
    }
  });
}

void attention_naive_values_reference(const AttentionShape& s, std::span<const double> att,
                                      std::span<const double> qkv, std::span<double> y) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int t = 0; t < s.T; ++t)
      for (int d = 0; d < s.D; ++d) {
        double sum = 0;
        for (int u = 0; u <= t; ++u) sum += att[hd.att(t, u)] * qkv[hd.at(u, 2, d)];
        y[hd.out(t, d)] = sum;
      }
  });
}

void attention_naive_dv_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> dy,
                                  std::span<double> dqkv) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int u = 0; u < s.T; ++u)
      for (int d = 0; d < s.D; ++d) {
        double sum = 0;
        for (int t = u; t < s.T; ++t) sum += att[hd.att(t, u)] * dy[hd.out(t, d)];
        dqkv[hd.at(u, 2, d)] = sum;
      }
  });
}

void attention_naive_dscores_reference(const AttentionShape& s, std::span<const double> qkv,
                                       std::span<const double> y, std::span<const double> dy, std::span<double> att) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int t = 0; t < s.T; ++t) {
      double w = 0;  // sum over u of P(t, u) dP(t, u), which is dy_t . y_t where y = P v
      for (int d = 0; d < s.D; ++d) w += dy[hd.out(t, d)] * y[hd.out(t, d)];
      for (int u = 0; u < s.T; ++u) {
        double dp = 0;  // dP(t, u) = dy_t . v_u
        for (int d = 0; d < s.D; ++d) dp += dy[hd.out(t, d)] * qkv[hd.at(u, 2, d)];
        att[hd.att(t, u)] = u <= t ? att[hd.att(t, u)] * (dp - w) * inv_sqrt_d(s) : 0;
      }
    }
  });
}

void attention_naive_dq_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> qkv,
                                  std::span<double> dqkv) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int t = 0; t < s.T; ++t)
      for (int d = 0; d < s.D; ++d) {
        double sum = 0;
        for (int u = 0; u <= t; ++u) sum += att[hd.att(t, u)] * qkv[hd.at(u, 1, d)];
        dqkv[hd.at(t, 0, d)] = sum;
      }
  });
}

void attention_naive_dk_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> qkv,
                                  std::span<double> dqkv) {
  each_head(s, [&](const NaiveHead& hd) {
    for (int u = 0; u < s.T; ++u)
      for (int d = 0; d < s.D; ++d) {
        double sum = 0;
        for (int t = u; t < s.T; ++t) sum += att[hd.att(t, u)] * qkv[hd.at(t, 0, d)];
        dqkv[hd.at(u, 1, d)] = sum;
      }
  });
}

}  // namespace cpu
