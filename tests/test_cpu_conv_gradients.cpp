// Finite-difference checks of the convolutional layers' gradients: the gradient kernels' plain references in double
// (conv2d_backward_data, conv2d_backward_weight, bias_backward over pixel rows, max_pool_backward) against central
// differences of the forward kernels' references, and the tuned CPU twins in fp32 against the same differences.
// With L = sum(out * R) for a fixed random R, L is linear in the input, the weights and the bias of a convolution,
// so its central difference is exact up to rounding (in double ~1e-12 here): what the test checks is the gradient
// formulas themselves (which taps, which padding, which flip), independently of the parity test, which compares the
// backends with these same references. A max pool is linear in its input between ties: inputs 0.01 or more apart
// and h = 1e-4 keep every window's maximum where it is.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/kernel_table.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"

namespace {

using Values = std::vector<double>;

struct Shape {
  long B, H, W, C, OC, KS, pad;
};

core::PlanEntry entry(core::Op op, const Shape& s) {
  core::PlanEntry e{.op = op, .B = s.B, .C = s.C, .OC = s.OC};
  e.H = s.H;
  e.W = s.W;
  e.KS = int(s.KS);
  e.pad = int(s.pad);
  return e;
}

Values random_values(size_t n, core::Pcg32& rng) {
  Values v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

double dot(const Values& a, const Values& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// L = sum(conv2d_forward(inp, weight, bias) * R), linear (no activation), by the reference in double.
double conv_loss(const Shape& s, const Values& inp, const Values& weight, const Values& bias, const Values& R) {
  core::PlanEntry e = entry(core::Op::conv2d_forward, s);
  e.activation = false;
  std::vector<Values> b{Values(R.size()), Values(R.size()), inp, weight, bias};
  cpu::run_reference(e, {}, b, core::Precision::FP32);
  return dot(b[0], R);
}

// The central difference of f at each element of x (x restored after).
template <typename F>
Values central_differences(Values& x, double h, F f) {
  Values d(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = f();
    x[i] = keep - h;
    const double down = f();
    x[i] = keep;
    d[i] = (up - down) / (2 * h);
  }
  return d;
}

// The tuned CPU twin of e on fp32 copies of the bindings (outputs first in `b`), results back as doubles.
void run_twin(const core::PlanEntry& e, std::vector<Values>& b) {
  std::vector<std::vector<float>> f(b.size());
  std::vector<void*> ptrs;
  for (size_t i = 0; i < b.size(); ++i) {
    f[i].assign(b[i].begin(), b[i].end());
    ptrs.push_back(f[i].data());
  }
  cpu::ThreadPool pool(2);
  cpu::Workspace16 ws;
  cpu::run_kernel(e, {}, ptrs, {core::Precision::FP32, pool, ws});
  for (size_t i = 0; i < b.size(); ++i) b[i].assign(f[i].begin(), f[i].end());
}

// |got - fd| <= atol + rtol |fd| everywhere; prints the first mismatches.
void check_close(const Values& got, const Values& fd, double atol, double rtol, const std::string& what) {
  REQUIRE(got.size() == fd.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - fd[i]) <= atol + rtol * std::fabs(fd[i])) && ++bad <= 3)
      MESSAGE(what << "[" << i << "]: gradient " << got[i] << ", finite difference " << fd[i]);
  CHECK_MESSAGE(bad == 0,
                what << ": " << bad << " of " << got.size() << " gradients differ from the finite differences");
}

}  // namespace

TEST_CASE("conv2d's input, weight and bias gradients equal central finite differences of its forward pass") {
  // Odd sizes, kernels of 1, 3 and 5, padding 0..2 (as the parity test's shapes), one with several CPU panels.
  for (const Shape& s : {Shape{2, 5, 4, 3, 4, 3, 1}, Shape{1, 6, 7, 2, 3, 3, 0}, Shape{2, 6, 5, 2, 3, 5, 2},
                         Shape{1, 4, 3, 5, 2, 1, 0}, Shape{3, 13, 11, 4, 6, 3, 1}}) {
    const std::string label = "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) +
                              " C=" + std::to_string(s.C) + " OC=" + std::to_string(s.OC) +
                              " KS=" + std::to_string(s.KS) + " pad=" + std::to_string(s.pad);
    CAPTURE(label);
    core::Pcg32 rng(7);
    const core::PlanEntry fwd = entry(core::Op::conv2d_forward, s);
    Values inp = random_values(size_t(s.B * s.H * s.W * s.C), rng);
    Values weight = random_values(size_t(s.OC * s.KS * s.KS * s.C), rng);
    Values bias = random_values(size_t(s.OC), rng);
    const Values R = random_values(size_t(s.B * fwd.OH() * fwd.OW() * s.OC), rng);  // dL/dout
    auto loss = [&] { return conv_loss(s, inp, weight, bias, R); };
    const double h = 1e-3;
    const Values fd_inp = central_differences(inp, h, loss), fd_weight = central_differences(weight, h, loss),
                 fd_bias = central_differences(bias, h, loss);

    // The references in double.
    std::vector<Values> data{Values(inp.size()), R, weight};
    cpu::run_reference(entry(core::Op::conv2d_backward_data, s), {}, data, core::Precision::FP32);
    check_close(data[0], fd_inp, 1e-9, 1e-9, "reference dinp");
    std::vector<Values> wgt{Values(weight.size()), R, inp};
    cpu::run_reference(entry(core::Op::conv2d_backward_weight, s), {}, wgt, core::Precision::FP32);
    check_close(wgt[0], fd_weight, 1e-9, 1e-9, "reference dweight");
    const long pixels = s.B * fwd.OH() * fwd.OW();
    const core::PlanEntry db{.op = core::Op::bias_backward, .B = pixels, .OC = s.OC};
    std::vector<Values> bb{Values(bias.size()), R};
    cpu::run_reference(db, {}, bb, core::Precision::FP32);
    check_close(bb[0], fd_bias, 1e-9, 1e-9, "reference dbias (bias_backward over the pixel rows)");

    // The tuned twins in fp32: sums of up to a few hundred products in fp32 (~1e-6 relative).
    run_twin(entry(core::Op::conv2d_backward_data, s), data);
    check_close(data[0], fd_inp, 1e-5, 1e-4, "cpu dinp");
    run_twin(entry(core::Op::conv2d_backward_weight, s), wgt);
    check_close(wgt[0], fd_weight, 1e-5, 1e-4, "cpu dweight");
  }
}

TEST_CASE("max_pool's input gradient equals central finite differences of its forward pass") {
  for (auto [B, H, W, C] : {std::array<long, 4>{2, 4, 6, 3}, {1, 7, 5, 2}, {3, 9, 9, 4}}) {
    CAPTURE(std::to_string(B) + "x" + std::to_string(H) + "x" + std::to_string(W) + "x" + std::to_string(C));
    core::PlanEntry e{.op = core::Op::max_pool_forward, .B = B, .C = C, .OC = C};
    e.H = H;
    e.W = W;
    const size_t n = size_t(B * H * W * C), m = size_t(B * e.OH() * e.OW() * C);
    // Distinct values 0.01 apart in a shuffled order: no window's maximum moves within h.
    Values inp(n);
    for (size_t i = 0; i < n; ++i) inp[i] = 0.01 * double((i * 7919) % n) - 1.0;
    core::Pcg32 rng(3);
    const Values R = random_values(m, rng);
    auto loss = [&] {
      std::vector<Values> b{Values(m), inp};
      cpu::run_reference(e, {}, b, core::Precision::FP32);
      return dot(b[0], R);
    };
    const Values fd = central_differences(inp, 1e-4, loss);
    core::PlanEntry back = e;
    back.op = core::Op::max_pool_backward;
    std::vector<Values> b{Values(n), R, inp};
    cpu::run_reference(back, {}, b, core::Precision::FP32);
    check_close(b[0], fd, 1e-9, 1e-9, "reference dinp");
    run_twin(back, b);
    check_close(b[0], fd, 1e-6, 1e-6, "cpu dinp");
  }
}
