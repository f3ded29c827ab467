// LayerNorm on the CPU in fp32 (cpu/layernorm.hpp) against the double reference (cpu::layer_norm_reference and its
// backward): one row, one feature, rows over several partial-sum blocks, large offsets; 1 and 2 threads bit-identical.
#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "cpu_test_util.hpp"
#include "cpu/layernorm.hpp"
#include "cpu/transformer_reference.hpp"

namespace {

struct Out {
  std::vector<float> y, mean, rstd, dx, dg, db;
};

Out run(long rows, int C, const std::vector<float>& x, const std::vector<float>& g, const std::vector<float>& b,
        const std::vector<float>& dy, int threads) {
  cpu::ThreadPool pool(threads);
  Out o{std::vector<float>(x.size()), std::vector<float>(size_t(rows)), std::vector<float>(size_t(rows)),
        std::vector<float>(x.size()), std::vector<float>(size_t(C)), std::vector<float>(size_t(C))};
  cpu::layer_norm_forward(rows, C, 1e-5f, x.data(), g.data(), b.data(), o.y.data(), o.mean.data(), o.rstd.data(), pool);
  cpu::layer_norm_backward_data(rows, C, x.data(), g.data(), o.mean.data(), o.rstd.data(), dy.data(), o.dx.data(),
                                false, pool);
  cpu::layer_norm_backward_params(rows, C, x.data(), o.mean.data(), o.rstd.data(), dy.data(), o.dg.data(),
                                  o.db.data(), pool);
  return o;
}

}  // namespace

TEST_CASE("LayerNorm in fp32 against the double reference, forward and backward") {
  // (rows, C, offset): one row; one feature (xhat is 0: out = b); rows over several blocks of 256; values far from 0
  // (the two-pass variance must not cancel).
  for (auto [rows, C, offset] : {std::tuple{1L, 48, 0.0f}, std::tuple{5L, 1, 0.0f}, std::tuple{700L, 37, 0.0f},
                                 std::tuple{64L, 128, 1000.0f}}) {
    INFO("rows " << rows << " C " << C << " offset " << offset);
    core::Pcg32 rng(3);
    std::vector<float> x, g, b, dy;
    for (long i = 0; i < rows * C; ++i) x.push_back(offset + rng.uniform(-2, 2)), dy.push_back(rng.uniform(-1, 1));
    for (int c = 0; c < C; ++c) g.push_back(rng.uniform(0.5f, 1.5f)), b.push_back(rng.uniform(-0.5f, 0.5f));
    const Out o = run(rows, C, x, g, b, dy, 2);
    const std::vector<double> xd(x.begin(), x.end()), gd(g.begin(), g.end()), bd(b.begin(), b.end()),
        dyd(dy.begin(), dy.end());
    std::vector<double> y(x.size()), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows)), dx(x.size()), dg(static_cast<size_t>(C), 0.0),
        db(static_cast<size_t>(C), 0.0);
    cpu::layer_norm_reference(int(rows), C, 1e-5, xd, gd, bd, y, mean, rstd);
    cpu::layer_norm_backward_reference(int(rows), C, xd, gd, mean, rstd, dyd, dx, dg, db);
    // The float inputs near 1000 carry 6e-5 of rounding each: xhat (order 1) is off by that over the spread of 2.
    const double tol = offset > 0 ? 2e-4 : 2e-6 * std::sqrt(double(C));
    CHECK(test::worst_relative_error(o.y, y) < tol);
    CHECK(test::worst_relative_error(o.mean, mean) < 1e-6);
    CHECK(test::worst_relative_error(o.rstd, rstd) < tol);
    CHECK(test::worst_relative_error(o.dx, dx) < 10 * tol);
    CHECK(test::worst_relative_error(o.dg, dg) < 1e-5 * std::sqrt(double(rows)) + tol);
    CHECK(test::worst_relative_error(o.db, db) < 1e-5 * std::sqrt(double(rows)));
  }
}

TEST_CASE("LayerNorm: the same bits on 1 and 2 threads") {
  const long rows = 1000;
  const int C = 24;
  core::Pcg32 rng(9);
  std::vector<float> x, g, b, dy;
  for (long i = 0; i < rows * C; ++i) x.push_back(rng.uniform(-2, 2)), dy.push_back(rng.uniform(-1, 1));
  for (int c = 0; c < C; ++c) g.push_back(rng.uniform(0.5f, 1.5f)), b.push_back(rng.uniform(-0.5f, 0.5f));
  const Out one = run(rows, C, x, g, b, dy, 1), two = run(rows, C, x, g, b, dy, 2);
  CHECK(one.y == two.y);
  CHECK(one.dx == two.dx);
  CHECK(one.dg == two.dg);
  CHECK(one.db == two.db);
}
