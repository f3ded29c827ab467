// The CPU kernels' special checks: each kernel's plain reference (its src/cpu/ops/ file, through
// cpu::run_reference) against central finite differences of its forward partner, the optimizers' reference and tuned
// twin against hand-checked torch values, the activation against its closed form, loss_reduce's double accumulation.
// (Each tuned twin and GPU shader against the reference, and the same bits on any thread count, is
// tests/test_kernel_parity.cpp; the whole training step against an independent double oracle, with its own finite
// differences, is tests/test_train_step.cpp.)
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/kernel_table.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"

using core::Activation;
using core::Op;
using Values = std::vector<double>;

namespace {

// Uniform values that are exactly representable in float.
Values random_values(size_t n, uint64_t seed, double lo = -1, double hi = 1) {
  core::Pcg32 rng(seed);
  Values v(n);
  for (auto& x : v) x = rng.uniform(static_cast<float>(lo), static_cast<float>(hi));
  return v;
}

// |got - ref| <= atol + rtol * |ref| for every element; prints the first mismatches (llm.c style).
template <typename A, typename B>
void check_close(const char* what, const std::vector<A>& got, const std::vector<B>& ref, double atol, double rtol) {
  REQUIRE(got.size() == ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    if (std::fabs(g - r) <= atol + rtol * std::fabs(r)) continue;
    if (++bad <= 5) MESSAGE(what << "[" << i << "]: got " << g << ", expected " << r);
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements out of tolerance");
  CHECK(bad == 0);
}

// The reference of plan entry e (fp32 variant) on `bindings`, every binding of the kernel in order, read and written
// in place (an absent one: an empty vector).
void reference(const core::PlanEntry& e, const core::StepArgs& s, std::initializer_list<Values*> bindings) {
  std::vector<Values> b;
  for (const Values* v : bindings) b.push_back(*v);
  cpu::run_reference(e, s, b, core::Precision::FP32);
  size_t i = 0;
  for (Values* v : bindings) *v = b[i++];
}

// The tuned fp32 twin of plan entry e on `bindings` (pointers, in binding order).
void twin(const core::PlanEntry& e, const core::StepArgs& s, std::vector<void*> bindings, cpu::ThreadPool& pool) {
  cpu::Workspace16 unused;
  cpu::run_kernel(e, s, bindings, {core::Precision::FP32, pool, unused});
}

core::StepArgs with_activation(Activation act) {
  core::StepArgs s;
  s.activation = act;
  return s;
}

struct Shape {
  long B, C, OC;
};
// Batch 1, 7, 33; features 5, 17; outputs 10, 3; and reductions longer than the others (batch 300, 260 outputs).
const Shape kShapes[] = {{1, 5, 3}, {7, 17, 10}, {33, 5, 10}, {33, 17, 3}, {20, 40, 37}, {300, 20, 7}, {9, 12, 260}};

// Everything one fully-connected layer computes, forward and backward, by the references. L = sum(out * R), so
// dL/dout = R.
struct Layer {
  Values out, pre, dpre, dinp, dw, db;
  void run(const Shape& s, Values& x, Values& w, Values& b, const Values& r, bool apply_act, Activation act) {
    const core::StepArgs step = with_activation(act);
    out.assign(s.B * s.OC, 0.0);
    pre.assign(s.B * s.OC, 0.0);
    dpre = r;
    dinp.assign(s.B * s.C, 0.0);
    dw.assign(s.OC * s.C, 0.0);
    db.assign(s.OC, 0.0);
    reference({.op = Op::matmul_forward, .activation = apply_act, .B = s.B, .C = s.C, .OC = s.OC}, step,
              {&out, &pre, &x, &w, &b});
    Values dout = r;
    if (apply_act) reference({.op = Op::act_backward, .N = r.size()}, step, {&dpre, &dout, &pre});
    reference({.op = Op::matmul_backward_weight, .B = s.B, .C = s.C, .OC = s.OC}, step, {&dw, &dpre, &x});
    reference({.op = Op::bias_backward, .B = s.B, .OC = s.OC}, step, {&db, &dpre});
    reference({.op = Op::matmul_backward_data, .B = s.B, .C = s.C, .OC = s.OC}, step, {&dinp, &dpre, &w});
  }
};

double dot(const Values& a, const Values& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

TEST_CASE("matmul_forward's reference: the backward references match central finite differences") {
  const double h = 1e-6;
  for (const auto& s : kShapes) {
    for (int mode = 0; mode < 4; ++mode) {  // linear, then each activation
      const bool apply_act = mode > 0;
      const Activation act = apply_act ? core::kActivations[mode - 1] : Activation::ReLU;
      CAPTURE(s.B);
      CAPTURE(s.C);
      CAPTURE(s.OC);
      CAPTURE(mode);
      auto x = random_values(s.B * s.C, 1), w = random_values(s.OC * s.C, 2), b = random_values(s.OC, 3);
      const auto r = random_values(s.B * s.OC, 4);
      Layer grads;
      grads.run(s, x, w, b, r, apply_act, act);
      auto loss = [&] {
        Values out(s.B * s.OC), pre(s.B * s.OC);
        reference({.op = Op::matmul_forward, .activation = apply_act, .B = s.B, .C = s.C, .OC = s.OC},
                  with_activation(act), {&out, &pre, &x, &w, &b});
        return dot(out, r);
      };
      // Perturbs every entry of small tensors and 150 spread-out entries of larger ones.
      auto fd_check = [&](const char* what, Values& param, const Values& grad) {
        Values got, want;
        const size_t stride = std::max<size_t>(1, param.size() / 150);
        for (size_t i = 0; i < param.size(); i += stride) {
          const double saved = param[i];
          param[i] = saved + h;
          const double up = loss();
          param[i] = saved - h;
          const double down = loss();
          param[i] = saved;
          got.push_back(grad[i]);
          want.push_back((up - down) / (2 * h));
        }
        check_close(what, got, want, 1e-7, 1e-6);
      };
      fd_check("dinp", x, grads.dinp);
      fd_check("dweight", w, grads.dw);
      fd_check("dbias", b, grads.db);
    }
  }
}

TEST_CASE("the activation: closed-form values, act_backward's reference against finite differences, the fp32 twin") {
  cpu::ThreadPool pool(2);
  auto act_ref = [](Values x, Activation act) {  // act_forward's reference: out = act(x)
    Values pre(x.size());
    reference({.op = Op::act_forward, .N = x.size()}, with_activation(act), {&pre, &x});
    return x;
  };
  CHECK(act_ref({1.0}, Activation::GELU)[0] == doctest::Approx(0.8411919906082768).epsilon(1e-14));
  CHECK(act_ref({-3.0}, Activation::GELU)[0] == doctest::Approx(-0.0036373920817729943).epsilon(1e-12));
  // SiLU: 1 / (1 + e^-1) = 0.7310585786300049; -3 / (1 + e^3) = -0.14227761953270035 (values of x / (1 + e^-x))
  CHECK(act_ref({1.0}, Activation::SiLU)[0] == doctest::Approx(0.7310585786300049).epsilon(1e-14));
  CHECK(act_ref({-3.0}, Activation::SiLU)[0] == doctest::Approx(-0.14227761953270035).epsilon(1e-12));
  CHECK(act_ref({-0.5}, Activation::ReLU)[0] == 0.0);
  CHECK(act_ref({0.25}, Activation::ReLU)[0] == 0.25);
  const size_t N = 1001;
  auto x = random_values(N, 5, -6, 6);
  auto dout = random_values(N, 6);
  const double h = 1e-6;
  for (Activation act : core::kActivations) {
    CAPTURE(std::string(core::to_string(act)));
    for (size_t i = 0; i < N; ++i)
      if (act == Activation::ReLU && std::fabs(x[i]) < 1e-3) x[i] = 0.5;  // keep away from the kink
    Values up = x, down = x;
    for (size_t i = 0; i < N; ++i) up[i] += h, down[i] -= h;
    up = act_ref(up, act);
    down = act_ref(down, act);
    Values dpre(N), want(N);
    reference({.op = Op::act_backward, .N = N}, with_activation(act), {&dpre, &dout, &x});
    for (size_t i = 0; i < N; ++i) want[i] = dout[i] * (up[i] - down[i]) / (2 * h);
    check_close("dpreact", dpre, want, 1e-8, 1e-6);
    // The fp32 twin (a vectorized exp) against tanh forms in double: GELU 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x³))),
    // SiLU x sigmoid(x) = 0.5x(1 + tanh(x/2)) (an identity of the logistic function, not the twin's 1/(1 + e^-x)).
    std::vector<float> out_f(x.begin(), x.end()), pre_f(N);
    twin({.op = Op::act_forward, .N = N}, with_activation(act), {pre_f.data(), out_f.data()}, pool);
    Values tanh_form(N);
    for (size_t i = 0; i < N; ++i) {
      const double xf = static_cast<float>(x[i]);
      switch (act) {
        case Activation::ReLU: tanh_form[i] = std::max(xf, 0.0); break;
        case Activation::GELU:
          tanh_form[i] = 0.5 * xf * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (xf + 0.044715 * xf * xf * xf)));
          break;
        case Activation::SiLU: tanh_form[i] = 0.5 * xf * (1 + std::tanh(xf / 2)); break;
      }
    }
    check_close("act_forward fp32", out_f, tanh_form, 1e-7, 1e-6);
  }
}

TEST_CASE("softmax_xent_forward_backward's reference: losses, dlogits against finite differences of the mean loss") {
  for (long B : {1L, 7L, 33L}) {
    for (long K : {3L, 10L}) {
      CAPTURE(B);
      CAPTURE(K);
      auto z = random_values(B * K, 7, -4, 4);
      Values labels(B);
      for (long b = 0; b < B; ++b) labels[b] = static_cast<double>((b * 7 + 3) % K);
      const core::PlanEntry e{.op = Op::softmax_xent_forward_backward, .B = B, .C = K};
      Values losses(B), dz(B * K), correct(B, -1), none;
      reference(e, {}, {&losses, &dz, &correct, &z, &labels, &none});
      Values want_loss(B);
      for (long b = 0; b < B; ++b) {
        double sum = 0;
        long arg = 0;
        for (long k = 0; k < K; ++k) {
          sum += std::exp(z[b * K + k]);
          if (z[b * K + k] > z[b * K + arg]) arg = k;
        }
        want_loss[b] = std::log(sum) - z[b * K + static_cast<long>(labels[b])];
        CHECK(correct[b] == (arg == labels[b] ? 1 : 0));
      }
      check_close("losses", losses, want_loss, 1e-12, 1e-12);
      const double h = 1e-6;
      auto mean_loss = [&] {
        Values l(B), d(B * K), c(B);
        reference(e, {}, {&l, &d, &c, &z, &labels, &none});
        double sum = 0;
        for (double x : l) sum += x;
        return sum / static_cast<double>(B);
      };
      Values fd(B * K);
      for (size_t i = 0; i < z.size(); ++i) {
        const double saved = z[i];
        z[i] = saved + h;
        const double up = mean_loss();
        z[i] = saved - h;
        const double down = mean_loss();
        z[i] = saved;
        fd[i] = (up - down) / (2 * h);
      }
      check_close("dlogits", dz, fd, 1e-8, 1e-6);
    }
  }
}

TEST_CASE("softmax_xent_forward_backward's fp32 twin: stable for large logits, the first of equal maxima predicts") {
  cpu::ThreadPool pool(3);
  std::vector<float> z = {1000, 1001, 1001, -1000, 0, 0};
  std::vector<int32_t> labels = {1, 2}, correct(2);
  std::vector<float> losses(2), dz(6);
  twin({.op = Op::softmax_xent_forward_backward, .B = 2, .C = 3}, {},
       {losses.data(), dz.data(), correct.data(), z.data(), labels.data()}, pool);
  CHECK(losses[0] == doctest::Approx(std::log(std::exp(-1.0) + 2)).epsilon(1e-6));
  CHECK(losses[1] == doctest::Approx(std::log(2.0)).epsilon(1e-6));
  CHECK(correct[0] == 1);
  CHECK(correct[1] == 0);
  for (float d : dz) CHECK(std::isfinite(d));
}

TEST_CASE("loss_reduce's fp32 twin accumulates in double") {
  // In float, 2^24 + 1 rounds back to 2^24: a float accumulator would lose all 1000 ones.
  cpu::ThreadPool pool(1);
  std::vector<float> losses(1001, 1.0f), history(2, -1.0f);
  losses[0] = 16777216.0f;
  core::StepArgs s;
  s.slot = 1;
  twin({.op = Op::loss_reduce, .B = 1001}, s, {history.data(), losses.data()}, pool);
  CHECK(history[1] == doctest::Approx((16777216.0 + 1000.0) / 1001.0).epsilon(1e-7));
  twin({.op = Op::loss_reduce, .B = 0}, s, {history.data(), losses.data()}, pool);
  CHECK(history[1] == 0.0f);
}

TEST_CASE("adamw_update: reference and fp32 twin against hand-checked torch values and a scalar re-statement") {
  cpu::ThreadPool pool(2);
  auto settings = [](float lr, float wd, long t) {
    core::StepArgs s;
    s.lr = lr;
    s.weight_decay = wd;
    s.t = t;
    return s;
  };
  // One parameter p=1, lr 0.1, wd 0.01, grads 0.5 then -0.5 (values from torch.optim.AdamW's formula by hand):
  // step 1: m=0.05, v=0.00025, p = 0.999 - 0.1*0.5/(0.5+1e-8) = 0.899000002; step 2: p = 0.9033641597874735.
  const core::PlanEntry one{.op = Op::adamw_update, .N = 1};
  Values p{1.0}, m{0.0}, v{0.0}, g{0.5}, none;
  std::vector<float> pf{1.0f}, mf{0.0f}, vf{0.0f}, gf{0.5f};
  reference(one, settings(0.1f, 0.01f, 1), {&p, &m, &v, &g, &none, &none});
  twin(one, settings(0.1f, 0.01f, 1), {pf.data(), mf.data(), vf.data(), gf.data()}, pool);
  CHECK(m[0] == doctest::Approx(0.05).epsilon(1e-7));
  CHECK(v[0] == doctest::Approx(0.00025).epsilon(1e-7));
  CHECK(p[0] == doctest::Approx(0.899000002).epsilon(1e-8));
  CHECK(pf[0] == doctest::Approx(0.899000002).epsilon(1e-7));
  g[0] = -0.5;
  gf[0] = -0.5f;
  reference(one, settings(0.1f, 0.01f, 2), {&p, &m, &v, &g, &none, &none});
  twin(one, settings(0.1f, 0.01f, 2), {pf.data(), mf.data(), vf.data(), gf.data()}, pool);
  CHECK(p[0] == doctest::Approx(0.9033641597874735).epsilon(1e-7));
  CHECK(pf[0] == doctest::Approx(0.9033641597874735).epsilon(1e-6));

  // Many elements, 3 steps, the reference and the fp32 twin against the formula written out here in double.
  const size_t N = 5003;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.05f;
  Values pd = random_values(N, 8), md(N, 0.0), vd(N, 0.0), pr = pd, mr(N, 0.0), vr(N, 0.0);
  std::vector<float> pff(pd.begin(), pd.end()), mff(N, 0.0f), vff(N, 0.0f);
  for (long t = 1; t <= 3; ++t) {
    Values gd = random_values(N, 100 + t);
    std::vector<float> gff(gd.begin(), gd.end());
    const core::PlanEntry e{.op = Op::adamw_update, .N = N};
    reference(e, settings(lr, wd, t), {&pd, &md, &vd, &gd, &none, &none});
    twin(e, settings(lr, wd, t), {pff.data(), mff.data(), vff.data(), gff.data()}, pool);
    for (size_t i = 0; i < N; ++i) {
      pr[i] -= double(lr) * double(wd) * pr[i];
      mr[i] = double(b1) * mr[i] + (1 - double(b1)) * gd[i];
      vr[i] = double(b2) * vr[i] + (1 - double(b2)) * gd[i] * gd[i];
      const double mhat = mr[i] / (1 - std::pow(double(b1), t)), vhat = vr[i] / (1 - std::pow(double(b2), t));
      pr[i] -= double(lr) * mhat / (std::sqrt(vhat) + double(eps));
    }
  }
  check_close("adamw reference", pd, pr, 1e-12, 1e-10);
  check_close("adamw fp32 twin", pff, pr, 1e-6, 1e-5);
}

TEST_CASE("sgd_update: reference and fp32 twin against torch.optim.SGD momentum and weight decay, hand-checked") {
  cpu::ThreadPool pool(2);
  auto settings = [](float lr, float momentum, float wd, long t) {
    core::StepArgs s;
    s.lr = lr;
    s.momentum = momentum;
    s.weight_decay = wd;
    s.t = t;
    return s;
  };
  // p=1, g=0.5, lr 0.1, momentum 0.9, wd 0.1: step 1 buf = 0.6, p = 0.94; step 2 buf = 0.9*0.6 + 0.5 + 0.094 = 1.134,
  // p = 0.94 - 0.1134 = 0.8266.
  const core::PlanEntry one{.op = Op::sgd_update, .N = 1};
  Values p{1.0}, buf{123.0}, g{0.5}, none;  // the buffer's old content is ignored at t == 1
  std::vector<float> pf{1.0f}, bf{123.0f}, gf{0.5f};
  for (long t : {1L, 2L}) {
    reference(one, settings(0.1f, 0.9f, 0.1f, t), {&p, &buf, &g, &none, &none});
    twin(one, settings(0.1f, 0.9f, 0.1f, t), {pf.data(), bf.data(), gf.data()}, pool);
    CHECK(buf[0] == doctest::Approx(t == 1 ? 0.6 : 1.134).epsilon(1e-7));
    CHECK(p[0] == doctest::Approx(t == 1 ? 0.94 : 0.8266).epsilon(1e-7));
    CHECK(bf[0] == doctest::Approx(t == 1 ? 0.6 : 1.134).epsilon(1e-6));
    CHECK(pf[0] == doctest::Approx(t == 1 ? 0.94 : 0.8266).epsilon(1e-6));
  }
  // No momentum, no decay: plain p -= lr * g.
  std::vector<float> p2{2.0f, -1.0f}, b2{0, 0}, g2{1.0f, -4.0f};
  twin({.op = Op::sgd_update, .N = 2}, settings(0.25f, 0.0f, 0.0f, 5), {p2.data(), b2.data(), g2.data()}, pool);
  CHECK(p2[0] == 1.75f);
  CHECK(p2[1] == 0.0f);
}
