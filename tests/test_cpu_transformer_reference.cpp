// The transformer's reference in double (cpu/transformer_reference.hpp): its parameter layout, every gradient against
// central finite differences of its loss (tied and untied output, one head and a head size of 1, masked positions),
// causality (no position sees a later token), and the loss of a fresh model near ln(V).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "cpu/transformer_reference.hpp"

namespace {

core::TokenBatch random_batch(int B, int T, int V, uint64_t seed) {
  core::Pcg32 rng(seed);
  core::TokenBatch b;
  b.B = B;
  b.T = T;
  for (int i = 0; i < B * T; ++i) {
    b.x.push_back(int32_t(rng.below(uint32_t(V))));
    b.y.push_back(int32_t(rng.below(uint32_t(V))));
    b.mask.push_back(i % 3 == 1 ? 0 : 1);  // some positions out of the loss
  }
  return b;
}

// Every parameter's gradient against (loss(w + h) - loss(w - h)) / 2h: the largest difference, relative to the
// larger of the two and 1e-3 (a gradient that is exactly 0 must be within 1e-3 * 1e-7 of 0).
double worst_gradient_error(const cpu::TransformerShape& s, uint64_t seed, double h = 1e-5) {
  std::vector<double> w = cpu::transformer_init(s, seed);
  for (double& x : w) x *= 10;  // larger weights: softmaxes far from uniform, LayerNorm gains away from 1
  core::Pcg32 rng(seed + 1);
  for (double& x : w) x += 0.1 * (rng.uniform() - 0.5);  // biases and shifts off zero
  const core::TokenBatch batch = random_batch(2, s.context, s.vocab, seed);
  const cpu::TransformerResult r = cpu::transformer_step_reference(s, w, batch, true);
  REQUIRE(r.grads.size() == w.size());
  double worst = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double keep = w[i];
    w[i] = keep + h;
    const double up = cpu::transformer_step_reference(s, w, batch, false).loss;
    w[i] = keep - h;
    const double down = cpu::transformer_step_reference(s, w, batch, false).loss;
    w[i] = keep;
    const double numeric = (up - down) / (2 * h);
    const double error = std::abs(numeric - r.grads[i]) / std::max({std::abs(numeric), std::abs(r.grads[i]), 1e-3});
    worst = std::max(worst, error);
  }
  return worst;
}

}  // namespace

TEST_CASE("the parameter layout: GPT-2's tensors, one after the other, the output projection tied or its own") {
  const cpu::TransformerShape s{.vocab = 11, .context = 6, .embed = 8, .heads = 2, .layers = 3};
  const size_t V = 11, T = 6, C = 8, per_block = 2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + 4 * C * C + 4 * C +
                                                  4 * C * C + C;
  const cpu::TransformerParams p = cpu::transformer_params(s);
  CHECK(p.count == V * C + T * C + 3 * per_block + 2 * C);
  CHECK(p.head == p.wte);
  cpu::TransformerShape untied = s;
  untied.tied = false;
  CHECK(cpu::transformer_params(untied).count == p.count + V * C);
  cpu::TransformerShape odd = s;
  odd.heads = 3;  // 8 features do not split into 3 heads
  CHECK_THROWS_AS(cpu::transformer_params(odd), core::Error);
}

TEST_CASE("every gradient of the reference matches central finite differences of its loss") {
  // Two blocks, tied; untied with one head; and a head size of 1 (as many heads as features).
  for (const cpu::TransformerShape& s :
       {cpu::TransformerShape{.vocab = 7, .context = 5, .embed = 8, .heads = 2, .layers = 2},
        cpu::TransformerShape{.vocab = 5, .context = 4, .embed = 6, .heads = 1, .layers = 1, .tied = false},
        cpu::TransformerShape{.vocab = 6, .context = 3, .embed = 4, .heads = 4, .layers = 1}}) {
    INFO("V " << s.vocab << " T " << s.context << " C " << s.embed << " H " << s.heads << " L " << s.layers);
    // The difference quotient's own error is O(h^2): 4e-2, 4e-4, 4e-6 at h = 1e-3, 1e-4, 1e-5 for the first shape
    // (it falls 100x per 10x in h, as truncation does); a wrong gradient term is off by its whole size.
    CHECK(worst_gradient_error(s, 7) < 2e-5);
  }
}

TEST_CASE("causal: a position's logits do not change with later tokens, and do with its own") {
  const cpu::TransformerShape s{.vocab = 9, .context = 6, .embed = 8, .heads = 2, .layers = 2};
  const std::vector<double> w = cpu::transformer_init(s, 3);
  core::TokenBatch a = random_batch(1, 6, 9, 5);
  core::TokenBatch b = a;
  b.x[3] = (b.x[3] + 1) % 9;
  const auto ra = cpu::transformer_step_reference(s, w, a, false), rb = cpu::transformer_step_reference(s, w, b, false);
  for (int t = 0; t < 6; ++t) {
    double diff = 0;
    for (int v = 0; v < 9; ++v) diff = std::max(diff, std::abs(ra.logits[size_t(t * 9 + v)] - rb.logits[size_t(t * 9 + v)]));
    if (t < 3)
      CHECK(diff == 0.0);
    else
      CHECK(diff > 1e-9);
  }
}

TEST_CASE("a fresh model predicts nearly uniformly: its loss is near ln(V); bad input is refused") {
  const cpu::TransformerShape s{.vocab = 50, .context = 8, .embed = 16, .heads = 4, .layers = 2};
  const std::vector<double> w = cpu::transformer_init(s, 1);
  const core::TokenBatch batch = random_batch(4, 8, 50, 2);
  CHECK(cpu::transformer_step_reference(s, w, batch, false).loss == doctest::Approx(std::log(50.0)).epsilon(0.02));
  core::TokenBatch bad = batch;
  bad.x[0] = 50;
  CHECK_THROWS_AS(cpu::transformer_step_reference(s, w, bad, false), core::Error);
  bad = batch;
  bad.mask.assign(bad.mask.size(), 0);
  CHECK_THROWS_AS(cpu::transformer_step_reference(s, w, bad, false), core::Error);
  CHECK_THROWS_AS(cpu::transformer_step_reference(s, std::vector<double>(3), batch, false), core::Error);
}

namespace {

// Random q, k, v and dy for `s` (from `seed`) and the textbook attention on them: its output y, probabilities att,
// log-sum-exp lse and the gradient dqkv (attention_reference, attention_backward_reference).
struct Textbook {
  std::vector<double> qkv, dy, y, att, lse, dqkv;
};
Textbook textbook(const cpu::AttentionShape& s, uint64_t seed) {
  core::Pcg32 rng(seed);
  const size_t rows = size_t(s.B) * size_t(s.T), stats = size_t(s.B) * size_t(s.H) * size_t(s.T);
  Textbook t{std::vector<double>(rows * size_t(3 * s.C())), std::vector<double>(rows * size_t(s.C())),
             std::vector<double>(rows * size_t(s.C())), std::vector<double>(stats * size_t(s.T)),
             std::vector<double>(stats), std::vector<double>(rows * size_t(3 * s.C()))};
  for (double& x : t.qkv) x = rng.uniform(-2, 2);
  for (double& x : t.dy) x = rng.uniform(-1, 1);
  cpu::attention_reference(s, t.qkv, t.y, t.att, t.lse);
  cpu::attention_backward_reference(s, t.qkv, t.att, t.dy, t.dqkv);
  return t;
}

}  // namespace

TEST_CASE("the fused backward's references (from y and the log-sum-exp) give the attention backward's gradients") {
  // attention_backward_dq_reference + attention_backward_dkv_reference, fed the forward's y and lse, against
  // attention_backward_reference (which the finite differences above check, inside the whole model): one position,
  // a head size of 1, several heads.
  for (const cpu::AttentionShape& s : {cpu::AttentionShape{1, 1, 1, 1}, cpu::AttentionShape{2, 9, 1, 1},
                                       cpu::AttentionShape{2, 7, 3, 4}}) {
    INFO("B " << s.B << " T " << s.T << " H " << s.H << " D " << s.D);
    const Textbook t = textbook(s, 3);
    const std::vector<double>&qkv = t.qkv, &dy = t.dy, &y = t.y, &lse = t.lse, &want = t.dqkv;
    std::vector<double> got(qkv.size(), 5.0), delta(lse.size());  // every column written by one of the two
    cpu::attention_backward_dq_reference(s, qkv, y, lse, dy, got, delta);
    cpu::attention_backward_dkv_reference(s, qkv, lse, delta, dy, got);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12).scale(1));
  }
}

TEST_CASE("the naive attention's seven references, chained, give the attention's forward and backward") {
  // scores -> softmax -> values, then dv, dscores (from the forward's y), dq, dk, against attention_reference and
  // attention_backward_reference: one position, a head size of 1, several heads.
  for (const cpu::AttentionShape& s : {cpu::AttentionShape{1, 1, 1, 1}, cpu::AttentionShape{2, 9, 1, 1},
                                       cpu::AttentionShape{2, 7, 3, 4}}) {
    INFO("B " << s.B << " T " << s.T << " H " << s.H << " D " << s.D);
    const Textbook t = textbook(s, 5);
    const std::vector<double>&qkv = t.qkv, &dy = t.dy, &y = t.y, &att = t.att, &want = t.dqkv;
    std::vector<double> got_att(att.size(), 3.0), got_y(y.size(), 3.0), got(qkv.size(), 5.0);
    cpu::attention_naive_scores_reference(s, qkv, got_att);
    cpu::attention_naive_softmax_reference(s, got_att);
    cpu::attention_naive_values_reference(s, got_att, qkv, got_y);
    for (size_t i = 0; i < att.size(); ++i) CHECK(got_att[i] == doctest::Approx(att[i]).epsilon(1e-12).scale(1));
    for (size_t i = 0; i < y.size(); ++i) CHECK(got_y[i] == doctest::Approx(y[i]).epsilon(1e-12).scale(1));
    cpu::attention_naive_dv_reference(s, got_att, dy, got);
    cpu::attention_naive_dscores_reference(s, qkv, got_y, dy, got_att);
    cpu::attention_naive_dq_reference(s, got_att, qkv, got);
    cpu::attention_naive_dk_reference(s, got_att, qkv, got);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12).scale(1));
  }
}
