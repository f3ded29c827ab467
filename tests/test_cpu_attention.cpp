// Causal attention on the CPU, naive (its seven kernels chained) and fused (cpu/attention.hpp), against the double
// reference (cpu::attention_reference): outputs, the naive form's probabilities, the fused form's log-sum-exp, and the
// gradients of q, k and v, for odd shapes (T not a multiple of a tile, one position, one head, a head size of 1,
// several tiles), at every SIMD level (the products of both forms run on the GEMM micro-kernels,
// cpu/attention_tile.hpp); the two forms against each other; the same bits on 1 and 2 threads and at every level.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "cpu_test_util.hpp"
#include "cpu/attention.hpp"
#include "cpu/simd.hpp"

namespace {

struct Data {
  std::vector<float> qkv, dy;
  std::vector<double> qkv_d, dy_d;
};

Data attention_data(const cpu::AttentionShape& s, uint64_t seed) {
  core::Pcg32 rng(seed);
  Data d;
  for (size_t i = 0; i < size_t(s.B) * size_t(s.T) * size_t(3 * s.C()); ++i) d.qkv.push_back(rng.uniform(-2, 2));
  for (size_t i = 0; i < size_t(s.B) * size_t(s.T) * size_t(s.C()); ++i) d.dy.push_back(rng.uniform(-1, 1));
  d.qkv_d.assign(d.qkv.begin(), d.qkv.end());
  d.dy_d.assign(d.dy.begin(), d.dy.end());
  return d;
}

struct Results {
  std::vector<float> y_naive, att, y_fused, lse, dqkv_naive, dqkv_fused, dqkv_passes;
};

Results run_both(const cpu::AttentionShape& s, const Data& d, int threads) {
  cpu::ThreadPool pool(threads);
  const size_t rows = size_t(s.B) * size_t(s.T), heads = size_t(s.B) * size_t(s.H) * size_t(s.T);
  Results r{std::vector<float>(rows * size_t(s.C())), std::vector<float>(heads * size_t(s.T)),
            std::vector<float>(rows * size_t(s.C())), std::vector<float>(heads),
            std::vector<float>(rows * size_t(3 * s.C()), 7.0f), std::vector<float>(rows * size_t(3 * s.C()), 7.0f),
            std::vector<float>(rows * size_t(3 * s.C()), 7.0f)};
  // The naive form's seven kernels in a step's order: the probabilities kept for the comparison before dscores
  // overwrites them.
  cpu::attention_naive_scores(s, d.qkv.data(), r.att.data(), pool);
  cpu::attention_naive_softmax(s, r.att.data(), pool);
  cpu::attention_naive_values(s, r.att.data(), d.qkv.data(), r.y_naive.data(), pool);
  std::vector<float> scores_grad = r.att;
  cpu::attention_naive_dv(s, scores_grad.data(), d.dy.data(), r.dqkv_naive.data(), pool);
  cpu::attention_naive_dscores(s, d.qkv.data(), r.y_naive.data(), d.dy.data(), scores_grad.data(), pool);
  cpu::attention_naive_dq(s, scores_grad.data(), d.qkv.data(), r.dqkv_naive.data(), pool);
  cpu::attention_naive_dk(s, scores_grad.data(), d.qkv.data(), r.dqkv_naive.data(), pool);
  cpu::attention_forward_fused(s, d.qkv.data(), r.y_fused.data(), r.lse.data(), pool);
  cpu::attention_backward_fused(s, d.qkv.data(), r.y_fused.data(), r.lse.data(), d.dy.data(), r.dqkv_fused.data(),
                                pool);
  std::vector<float> delta(heads);  // the two passes the GPU runs
  cpu::attention_backward_dq(s, d.qkv.data(), r.y_fused.data(), r.lse.data(), d.dy.data(), r.dqkv_passes.data(),
                             delta.data(), pool);
  cpu::attention_backward_dkv(s, d.qkv.data(), r.lse.data(), delta.data(), d.dy.data(), r.dqkv_passes.data(), pool);
  return r;
}

}  // namespace

TEST_CASE("naive and fused attention against the double reference, forward and backward") {
  // T = 37: a partial query tile; 1: one position; 70 with D = 1: a head size of 1 over two key tiles; 130 with
  // 2 heads of 16: several tiles of both kinds; 1 head of 64 (the tile size the L1 is planned for).
  for (const cpu::AttentionShape& s : {cpu::AttentionShape{2, 37, 3, 8}, cpu::AttentionShape{1, 1, 1, 1},
                                       cpu::AttentionShape{1, 70, 1, 1}, cpu::AttentionShape{2, 130, 2, 16},
                                       cpu::AttentionShape{1, 65, 1, 64}}) {
    INFO("B " << s.B << " T " << s.T << " H " << s.H << " D " << s.D);
    const Data d = attention_data(s, 11);
    const size_t rows = size_t(s.B) * size_t(s.T);
    std::vector<double> y(rows * size_t(s.C())), att(size_t(s.B) * size_t(s.H) * size_t(s.T) * size_t(s.T));
    std::vector<double> dqkv(rows * size_t(3 * s.C()));
    cpu::attention_reference(s, d.qkv_d, y, att);
    cpu::attention_backward_reference(s, d.qkv_d, att, d.dy_d, dqkv);
    // The log-sum-exp of each row's scaled scores, from the reference's own scores.
    std::vector<double> lse;
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.H; ++h)
        for (int t = 0; t < s.T; ++t) {
          double max = -INFINITY, sum = 0;
          std::vector<double> scores;
          for (int u = 0; u <= t; ++u) {
            double dot = 0;
            for (int k = 0; k < s.D; ++k)
              dot += d.qkv_d[(size_t(b) * size_t(s.T) + size_t(t)) * size_t(3 * s.C()) + size_t(h * s.D + k)] *
                     d.qkv_d[(size_t(b) * size_t(s.T) + size_t(u)) * size_t(3 * s.C()) + size_t(s.C() + h * s.D + k)];
            scores.push_back(dot / std::sqrt(double(s.D)));
            max = std::max(max, scores.back());
          }
          for (double x : scores) sum += std::exp(x - max);
          lse.push_back(max + std::log(sum));
        }
    test::LevelGuard guard;
    std::vector<Results> levels;
    for (const cpu::SimdLevel level : test::runnable_levels()) {
      INFO("SIMD level " << cpu::to_string(level));
      cpu::set_simd_level(level);
      levels.push_back(run_both(s, d, 2));
      const Results& r = levels.back();
      // fp32 sums of up to T products of values up to 2: a few ulps of the largest term.
      CHECK(test::worst_relative_error(r.y_naive, y) < 2e-6 * std::sqrt(double(s.T * s.D)) + 1e-6);
      CHECK(test::worst_relative_error(r.y_fused, y) < 2e-6 * std::sqrt(double(s.T * s.D)) + 1e-6);
      CHECK(test::worst_relative_error(r.att, att) < 1e-6);
      CHECK(test::worst_relative_error(r.lse, lse) < 2e-6 * std::sqrt(double(s.D)) + 1e-6);
      CHECK(test::worst_relative_error(r.dqkv_naive, dqkv) < 1e-5 * std::sqrt(double(s.T * s.D)));
      CHECK(test::worst_relative_error(r.dqkv_fused, dqkv) < 1e-5 * std::sqrt(double(s.T * s.D)));
      CHECK(test::worst_relative_error(r.dqkv_passes, dqkv) < 1e-5 * std::sqrt(double(s.T * s.D)));
      // The micro-kernels' contract: one fma chain per output, k ascending, at every level.
      CHECK(r.y_naive == levels.front().y_naive);
      CHECK(r.att == levels.front().att);
      CHECK(r.dqkv_naive == levels.front().dqkv_naive);
      CHECK(r.y_fused == levels.front().y_fused);
      CHECK(r.lse == levels.front().lse);
      CHECK(r.dqkv_passes == levels.front().dqkv_passes);
    }
  }
}

TEST_CASE("attention: the same bits on 1 and 2 threads, in both forms") {
  const cpu::AttentionShape s{3, 77, 2, 8};
  const Data d = attention_data(s, 5);
  const Results one = run_both(s, d, 1), two = run_both(s, d, 2);
  CHECK(one.y_naive == two.y_naive);
  CHECK(one.att == two.att);
  CHECK(one.y_fused == two.y_fused);
  CHECK(one.lse == two.lse);
  CHECK(one.dqkv_naive == two.dqkv_naive);
  CHECK(one.dqkv_fused == two.dqkv_fused);
  CHECK(one.dqkv_passes == two.dqkv_passes);
}
