// The CPU kernels' special checks and the thread pool: every gradient against central finite differences in double,
// the optimizers against hand-checked torch values, the activation against its closed form, loss_reduce's double
// accumulation. (Each kernel against the plain reference, and the same bits on any thread count, is
// tests/test_kernel_parity.cpp.)
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

#include "core/rng.hpp"
#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"

using core::Activation;

namespace {

// Uniform values that are exactly representable in float.
std::vector<double> random_values(size_t n, uint64_t seed, double lo = -1, double hi = 1) {
  core::Pcg32 rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = rng.uniform(static_cast<float>(lo), static_cast<float>(hi));
  return v;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
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

struct Shape {
  long B, C, OC;
};
// Batch 1, 7, 33; features 5, 17; outputs 10, 3; shapes spanning several register tiles and strips; and reductions
// longer than one 256-row block (batch 300 for dweight, 260 outputs for dinp).
const Shape kShapes[] = {{1, 5, 3},    {7, 17, 10},  {33, 5, 10}, {33, 17, 3},
                         {20, 40, 37}, {64, 70, 45}, {300, 20, 7}, {9, 12, 260}};

// Everything one fully-connected layer computes, forward and backward, in element type T.
template <typename T>
struct Layer {
  std::vector<T> out, pre, dpre, dinp, dw, db;
  // L = sum(out * R); dL/dout = R.
  void run(const Shape& s, const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& b,
           const std::vector<T>& r, bool apply_act, Activation act, cpu::ThreadPool& pool) {
    out.assign(s.B * s.OC, T(0));
    pre.assign(s.B * s.OC, T(0));
    dpre = r;
    dinp.assign(s.B * s.C, T(0));
    dw.assign(s.OC * s.C, T(0));
    db.assign(s.OC, T(0));
    cpu::matmul_forward(out.data(), apply_act ? pre.data() : nullptr, x.data(), w.data(), b.data(), s.B, s.C, s.OC,
                        apply_act, act, pool);
    if (apply_act) cpu::act_backward(dpre.data(), r.data(), pre.data(), r.size(), act, pool);
    cpu::matmul_backward_weight(dw.data(), dpre.data(), x.data(), s.B, s.C, s.OC, pool);
    cpu::bias_backward(db.data(), dpre.data(), s.B, s.OC, pool);
    cpu::matmul_backward_data(dinp.data(), dpre.data(), w.data(), s.B, s.C, s.OC, pool);
  }
};

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

TEST_CASE("thread pool: parallel_for covers every index exactly once, in chunks of at least grain") {
  for (int threads : {1, 2, 3, 4}) {
    cpu::ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (size_t n : {0, 1, 2, 7, 33, 1000, 1001}) {
      for (size_t grain : {1, 2, 7, 64, 5000}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(grain);
        std::vector<std::atomic<int>> hits(n);
        std::mutex mutex;
        std::vector<std::pair<size_t, size_t>> chunks;
        pool.parallel_for(n, grain, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) hits[i]++;
          std::lock_guard lock(mutex);
          chunks.emplace_back(b, e);
        });
        size_t wrong = 0, small = 0;
        for (auto& h : hits) wrong += h.load() != 1;
        for (auto [b, e] : chunks) small += (e - b < grain && e != n) || e <= b;
        CHECK(wrong == 0);
        CHECK(small == 0);
      }
    }
  }
  CHECK(cpu::ThreadPool(0).size() == static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST_CASE("thread pool: thousands of back-to-back small jobs neither hang nor lose work") {
  cpu::ThreadPool pool(3);
  std::atomic<long> total{0};
  for (int k = 0; k < 3000; ++k)
    pool.parallel_for(5, 1, [&](size_t b, size_t e) { total += static_cast<long>(e - b); });
  CHECK(total.load() == 15000);
}

TEST_CASE("thread pool: a worker chunk that outlasts the polling window still wakes the caller") {
  // The caller's own chunk waits until a worker has started the other one, which then sleeps 20 ms: far past the
  // pool's polling window, so only the condition variable can wake the caller. Run on a detached thread with a
  // timeout, so that a lost wake-up fails the test instead of hanging it (the pool is leaked then).
  auto* pool = new cpu::ThreadPool(2);
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  std::thread([pool, done] {
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> worker_started{false};
    pool->parallel_for(2, 1, [&](size_t, size_t) {
      if (std::this_thread::get_id() == caller) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!worker_started && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
      } else {
        worker_started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    done->set_value();
  }).detach();
  const bool returned = finished.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  CHECK(returned);
  if (returned) delete pool;
}

TEST_CASE("matmul_forward/backward gradients match central finite differences (double)") {
  cpu::ThreadPool pool(2);
  const double h = 1e-6;
  for (const auto& s : kShapes) {
    for (int mode = 0; mode < 3; ++mode) {
      const bool apply_act = mode > 0;
      const Activation act = mode == 2 ? Activation::GELU : Activation::ReLU;
      CAPTURE(s.B);
      CAPTURE(s.C);
      CAPTURE(s.OC);
      CAPTURE(mode);
      auto x = random_values(s.B * s.C, 1), w = random_values(s.OC * s.C, 2), b = random_values(s.OC, 3);
      const auto r = random_values(s.B * s.OC, 4);
      Layer<double> ref;
      ref.run(s, x, w, b, r, apply_act, act, pool);
      Layer<double> probe;
      auto loss = [&] {
        probe.out.assign(s.B * s.OC, 0.0);
        probe.pre.assign(s.B * s.OC, 0.0);
        cpu::matmul_forward(probe.out.data(), probe.pre.data(), x.data(), w.data(), b.data(), s.B, s.C, s.OC,
                            apply_act, act, pool);
        return dot(probe.out, r);
      };
      // Perturbs every entry of small tensors and 150 spread-out entries of larger ones.
      auto fd_check = [&](const char* what, std::vector<double>& param, const std::vector<double>& grad) {
        std::vector<double> got, want;
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
      fd_check("dinp", x, ref.dinp);
      fd_check("dweight", w, ref.dw);
      fd_check("dbias", b, ref.db);
    }
  }
}

TEST_CASE("activation values and act_backward against finite differences") {
  CHECK(cpu::activation(1.0, Activation::GELU) == doctest::Approx(0.8411919906082768).epsilon(1e-14));
  CHECK(cpu::activation(-3.0, Activation::GELU) == doctest::Approx(-0.0036373920817729943).epsilon(1e-12));
  CHECK(cpu::activation(-0.5, Activation::ReLU) == 0.0);
  CHECK(cpu::activation(0.25, Activation::ReLU) == 0.25);
  cpu::ThreadPool pool(2);
  const size_t N = 1001;
  auto x = random_values(N, 5, -6, 6);
  const auto dout = random_values(N, 6);
  for (Activation act : {Activation::ReLU, Activation::GELU}) {
    CAPTURE(std::string(core::to_string(act)));
    std::vector<double> dpre(N), want(N);
    cpu::act_backward(dpre.data(), dout.data(), x.data(), N, act, pool);
    const double h = 1e-6;
    for (size_t i = 0; i < N; ++i) {
      if (act == Activation::ReLU && std::fabs(x[i]) < 1e-3) x[i] = 0.5;  // keep away from the kink
      want[i] = dout[i] * (cpu::activation(x[i] + h, act) - cpu::activation(x[i] - h, act)) / (2 * h);
    }
    cpu::act_backward(dpre.data(), dout.data(), x.data(), N, act, pool);
    check_close("dpreact", dpre, want, 1e-8, 1e-6);
    // float (vectorized exp) against the double tanh form 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x³)))
    std::vector<float> got_f(N);
    std::vector<double> tanh_form(N);
    for (size_t i = 0; i < N; ++i) {
      got_f[i] = cpu::activation(static_cast<float>(x[i]), act);
      const double xf = static_cast<float>(x[i]);
      tanh_form[i] = act == Activation::ReLU
                         ? std::max(xf, 0.0)
                         : 0.5 * xf * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (xf + 0.044715 * xf * xf * xf)));
    }
    check_close("activation<float>", got_f, tanh_form, 1e-7, 1e-6);
  }
}

TEST_CASE("softmax_xent_forward_backward: losses, dlogits against finite differences of loss_reduce, argmax") {
  cpu::ThreadPool pool(3);
  for (long B : {1L, 7L, 33L}) {
    for (long K : {3L, 10L}) {
      CAPTURE(B);
      CAPTURE(K);
      auto z = random_values(B * K, 7, -4, 4);
      std::vector<int32_t> labels(B);
      for (long b = 0; b < B; ++b) labels[b] = static_cast<int32_t>((b * 7 + 3) % K);
      std::vector<double> losses(B), dz(B * K), want_loss(B);
      std::vector<int32_t> correct(B, -1);
      cpu::softmax_xent_forward_backward(losses.data(), dz.data(), correct.data(), z.data(), labels.data(), B, K,
                                         1.0 / B, pool);
      for (long b = 0; b < B; ++b) {
        double sum = 0;
        long arg = 0;
        for (long k = 0; k < K; ++k) {
          sum += std::exp(z[b * K + k]);
          if (z[b * K + k] > z[b * K + arg]) arg = k;
        }
        want_loss[b] = std::log(sum) - z[b * K + labels[b]];
        CHECK(correct[b] == (arg == labels[b] ? 1 : 0));
      }
      check_close("losses", losses, want_loss, 1e-12, 1e-12);
      std::vector<double> fd(B * K), scratch(B);
      const double h = 1e-6;
      auto mean_loss = [&] {
        double* no_dlogits = nullptr;
        int32_t* no_correct = nullptr;
        cpu::softmax_xent_forward_backward(scratch.data(), no_dlogits, no_correct, z.data(), labels.data(), B, K, 1.0,
                                           pool);
        return cpu::loss_reduce(scratch.data(), B);
      };
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
  // Stable for large logits; the first of equal maxima is the prediction.
  const std::vector<float> z = {1000, 1001, 1001, -1000, 0, 0};
  const std::vector<int32_t> labels = {1, 2};
  std::vector<float> losses(2), dz(6);
  std::vector<int32_t> correct(2);
  cpu::softmax_xent_forward_backward(losses.data(), dz.data(), correct.data(), z.data(), labels.data(), 2, 3, 1.0f,
                                     pool);
  CHECK(losses[0] == doctest::Approx(std::log(std::exp(-1.0) + 2) ).epsilon(1e-6));
  CHECK(losses[1] == doctest::Approx(std::log(2.0)).epsilon(1e-6));
  CHECK(correct[0] == 1);
  CHECK(correct[1] == 0);
  for (float d : dz) CHECK(std::isfinite(d));
}

TEST_CASE("loss_reduce accumulates in double") {
  // In float, 2^24 + 1 rounds back to 2^24: a float accumulator would lose all 1000 ones.
  std::vector<float> losses(1001, 1.0f);
  losses[0] = 16777216.0f;
  CHECK(cpu::loss_reduce(losses.data(), 1001) == doctest::Approx((16777216.0 + 1000.0) / 1001.0).epsilon(1e-7));
  CHECK(cpu::loss_reduce(losses.data(), 0) == 0.0f);
}

TEST_CASE("adamw_update: hand-checked torch values and a scalar re-statement") {
  cpu::ThreadPool pool(2);
  // One parameter p=1, lr 0.1, wd 0.01, grads 0.5 then -0.5 (values from torch.optim.AdamW's formula by hand):
  // step 1: m=0.05, v=0.00025, p = 0.999 - 0.1*0.5/(0.5+1e-8) = 0.899000002; step 2: p = 0.9033641597874735.
  std::vector<double> p{1.0}, m{0.0}, v{0.0};
  std::vector<double> g{0.5};
  cpu::adamw_update(p.data(), m.data(), v.data(), g.data(), 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 1, pool);
  CHECK(m[0] == doctest::Approx(0.05).epsilon(1e-7));
  CHECK(v[0] == doctest::Approx(0.00025).epsilon(1e-7));
  CHECK(p[0] == doctest::Approx(0.899000002).epsilon(1e-8));
  g[0] = -0.5;
  cpu::adamw_update(p.data(), m.data(), v.data(), g.data(), 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 2, pool);
  CHECK(p[0] == doctest::Approx(0.9033641597874735).epsilon(1e-7));

  // Many elements, 3 steps, float and double kernels against the formula in double.
  const size_t N = 5003;
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.05f;
  auto pd = random_values(N, 8);
  std::vector<double> md(N, 0.0), vd(N, 0.0), pr = pd, mr(N, 0.0), vr(N, 0.0);
  std::vector<float> pf = cast<float>(pd), mf(N, 0.0f), vf(N, 0.0f);
  for (long t = 1; t <= 3; ++t) {
    const auto gd = random_values(N, 100 + t);
    const auto gf = cast<float>(gd);
    cpu::adamw_update(pd.data(), md.data(), vd.data(), gd.data(), N, lr, b1, b2, eps, wd, t, pool);
    cpu::adamw_update(pf.data(), mf.data(), vf.data(), gf.data(), N, lr, b1, b2, eps, wd, t, pool);
    for (size_t i = 0; i < N; ++i) {
      pr[i] -= double(lr) * double(wd) * pr[i];
      mr[i] = double(b1) * mr[i] + (1 - double(b1)) * gd[i];
      vr[i] = double(b2) * vr[i] + (1 - double(b2)) * gd[i] * gd[i];
      const double mhat = mr[i] / (1 - std::pow(double(b1), t)), vhat = vr[i] / (1 - std::pow(double(b2), t));
      pr[i] -= double(lr) * mhat / (std::sqrt(vhat) + double(eps));
    }
  }
  check_close("adamw double", pd, pr, 1e-12, 1e-10);
  check_close("adamw float", pf, pr, 1e-6, 1e-5);
}

TEST_CASE("sgd_update: torch.optim.SGD momentum and weight decay, hand-checked") {
  cpu::ThreadPool pool(2);
  // p=1, g=0.5, lr 0.1, momentum 0.9, wd 0.1: step 1 buf = 0.6, p = 0.94; step 2 buf = 0.9*0.6 + 0.5 + 0.094 = 1.134,
  // p = 0.94 - 0.1134 = 0.8266.
  std::vector<double> p{1.0}, buf{123.0}, g{0.5};  // the buffer's old content is ignored at t == 1
  cpu::sgd_update(p.data(), buf.data(), g.data(), 1, 0.1f, 0.9f, 0.1f, 1, pool);
  CHECK(buf[0] == doctest::Approx(0.6).epsilon(1e-7));
  CHECK(p[0] == doctest::Approx(0.94).epsilon(1e-7));
  cpu::sgd_update(p.data(), buf.data(), g.data(), 1, 0.1f, 0.9f, 0.1f, 2, pool);
  CHECK(buf[0] == doctest::Approx(1.134).epsilon(1e-7));
  CHECK(p[0] == doctest::Approx(0.8266).epsilon(1e-7));
  // No momentum, no decay: plain p -= lr * g.
  std::vector<float> pf{2.0f, -1.0f}, bf{0, 0}, gf{1.0f, -4.0f};
  cpu::sgd_update(pf.data(), bf.data(), gf.data(), 2, 0.25f, 0.0f, 0.0f, 5, pool);
  CHECK(pf[0] == 1.75f);
  CHECK(pf[1] == 0.0f);
}

TEST_CASE("gather_batch copies the indexed rows and labels") {
  cpu::ThreadPool pool(2);
  const long N = 50, C = 13;
  const auto xd = random_values(N * C, 9);
  const auto x = cast<float>(xd);
  std::vector<int32_t> y(N);
  for (long i = 0; i < N; ++i) y[i] = static_cast<int32_t>(i % 7);
  const std::vector<uint32_t> idx = {49, 0, 17, 17, 3};
  std::vector<double> xb(idx.size() * C, -1);
  std::vector<int32_t> yb(idx.size(), -1);
  cpu::gather_batch(xb.data(), yb.data(), x.data(), y.data(), idx.data(), static_cast<long>(idx.size()), C, pool);
  size_t wrong = 0;
  for (size_t b = 0; b < idx.size(); ++b) {
    CHECK(yb[b] == y[idx[b]]);
    for (long c = 0; c < C; ++c) wrong += xb[b * C + c] != static_cast<double>(x[idx[b] * C + c]);
  }
  CHECK(wrong == 0);
}
