// The CPU kernels on 16-bit storage (cpu/kernels16.hpp), for fp16 and bf16, the checks the parity test does not make
// (tests/test_kernel_parity.cpp runs every 16-bit twin against the plain reference, against the rounded fp32 twin bit
// for bit, and on 1 and 3 threads): how far 16-bit results may drift from fp32 on unrounded inputs (first-order error
// bounds); optimizers that unscale loss-scaled gradients bit for bit as the fp32 optimizer on the unscaled ones;
// check_finite_grads16; a workspace that stops growing after the first call; the bulk conversions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/rng.hpp"
#include "cpu/kernels.hpp"
#include "cpu/kernels16.hpp"
#include "cpu/thread_pool.hpp"

using core::Activation;
using cpu::Storage16;

namespace {

const Storage16 kFormats[] = {Storage16::FP16, Storage16::BF16};

// The scalar conversions of core/half.hpp (independent of the bulk ones the kernels use).
uint16_t round16(float x, Storage16 s) { return s == Storage16::FP16 ? core::float_to_fp16(x) : core::float_to_bf16(x); }
float widen1(uint16_t h, Storage16 s) { return s == Storage16::FP16 ? core::fp16_to_float(h) : core::bf16_to_float(h); }

std::vector<uint16_t> to16(const std::vector<float>& v, Storage16 s) {
  std::vector<uint16_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = round16(v[i], s);
  return r;
}
std::vector<float> from16(const std::vector<uint16_t>& v, Storage16 s) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = widen1(v[i], s);
  return r;
}

std::vector<float> uniform(size_t n, uint64_t seed, float lo = -1, float hi = 1) {
  core::Pcg32 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

// The usual per-dtype relative tolerances (CONVENTIONS.md). Both exceed 2u + u² (u = 2^-11 for fp16, 2^-8 for bf16):
// the relative error of a product of two rounded operands.
double rtol_for(Storage16 s) { return s == Storage16::FP16 ? 1e-3 : 1.6e-2; }

// Same bits everywhere (a float compared by its bits, so that -0 != +0 and NaNs are caught); prints the first mismatches.
template <typename T>
void check_bits(const char* what, const std::vector<T>& got, const std::vector<T>& ref) {
  REQUIRE(got.size() == ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &ref[i], sizeof(T)) == 0) continue;
    if (++bad <= 5) MESSAGE(what << "[" << i << "]: got " << +got[i] << ", expected " << +ref[i]);
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements differ");
  CHECK(bad == 0);
}

// |got - ref| <= atol[i] + rtol * |ref| per element; prints the first mismatches.
void check_close(const char* what, const std::vector<float>& got, const std::vector<float>& ref,
                 const std::vector<double>& atol, double rtol) {
  REQUIRE(got.size() == ref.size());
  REQUIRE(atol.size() == ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    if (std::fabs(g - r) <= atol[i] + rtol * std::fabs(r)) continue;
    if (++bad <= 5) MESSAGE(what << "[" << i << "]: got " << g << ", expected " << r << ", atol " << atol[i]);
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements out of tolerance");
  CHECK(bad == 0);
}

struct Shape {
  long B, C, OC;
};

// One layer's worth of fp32 operands (unrounded): x (B,C) gathered from data (N,C), w (OC,C), b (OC), dout and preact
// (B,OC), logits (B,OC) in [-3, 3] with labels.
struct Inputs {
  Shape sh;
  long N;
  std::vector<float> data, w, b, dout, pre, logits;
  std::vector<int32_t> data_y, labels;
  std::vector<uint32_t> idx;

  Inputs(Shape s, uint64_t seed) : sh(s), N(s.B + 11) {
    data = uniform(static_cast<size_t>(N * s.C), seed);
    w = uniform(static_cast<size_t>(s.OC * s.C), seed + 1);
    b = uniform(static_cast<size_t>(s.OC), seed + 2);
    dout = uniform(static_cast<size_t>(s.B * s.OC), seed + 3);
    pre = uniform(static_cast<size_t>(s.B * s.OC), seed + 4, -2, 2);
    logits = uniform(static_cast<size_t>(s.B * s.OC), seed + 5, -3, 3);
    core::Pcg32 rng(seed + 6);
    for (long i = 0; i < N; ++i) data_y.push_back(static_cast<int32_t>(rng.next_u32() % 10));
    for (long i = 0; i < s.B; ++i) idx.push_back(rng.next_u32() % static_cast<uint32_t>(N));
    for (long i = 0; i < s.B; ++i) labels.push_back(static_cast<int32_t>(rng.next_u32() % static_cast<uint32_t>(s.OC)));
  }
  // x = data gathered at idx
  std::vector<float> x() const {
    std::vector<float> r;
    for (uint32_t i : idx) r.insert(r.end(), data.begin() + i * sh.C, data.begin() + (i + 1) * sh.C);
    return r;
  }
};

// Every output of the 16-bit kernels (or of their fp32 reference, rounded).
struct Outputs {
  std::vector<uint16_t> gx, out_lin, out_relu, pre_relu, out_gelu, pre_gelu, dlogits, dact_relu, dact_gelu, dw, db,
      dinp;
  std::vector<int32_t> gy, correct;
  std::vector<float> losses;
};

Outputs sized(const Shape& s) {
  Outputs o;
  const auto bc = static_cast<size_t>(s.B * s.C), bo = static_cast<size_t>(s.B * s.OC);
  o.gx.resize(bc);
  o.gy.resize(s.B);
  for (auto* v : {&o.out_lin, &o.out_relu, &o.pre_relu, &o.out_gelu, &o.pre_gelu, &o.dlogits, &o.dact_relu,
                  &o.dact_gelu})
    v->resize(bo);
  o.correct.resize(s.B);
  o.losses.resize(s.B);
  o.dw.resize(static_cast<size_t>(s.OC * s.C));
  o.db.resize(s.OC);
  o.dinp.resize(bc);
  return o;
}

// The 16-bit kernels on the rounded inputs.
Outputs run16(const Inputs& in, Storage16 fmt, cpu::ThreadPool& pool, cpu::Workspace16& ws) {
  const auto [B, C, OC] = in.sh;
  Outputs o = sized(in.sh);
  const auto x = to16(in.x(), fmt), w = to16(in.w, fmt), b = to16(in.b, fmt), dout = to16(in.dout, fmt),
             pre = to16(in.pre, fmt), logits = to16(in.logits, fmt);
  cpu::gather_batch16(o.gx.data(), o.gy.data(), in.data.data(), in.data_y.data(), in.idx.data(), B, C, fmt, pool);
  cpu::matmul_forward16(o.out_lin.data(), nullptr, x.data(), w.data(), b.data(), B, C, OC, false, Activation::ReLU,
                        fmt, ws, pool);
  cpu::matmul_forward16(o.out_relu.data(), o.pre_relu.data(), x.data(), w.data(), b.data(), B, C, OC, true,
                        Activation::ReLU, fmt, ws, pool);
  cpu::matmul_forward16(o.out_gelu.data(), o.pre_gelu.data(), x.data(), w.data(), b.data(), B, C, OC, true,
                        Activation::GELU, fmt, ws, pool);
  cpu::softmax_xent_forward_backward16(o.losses.data(), o.dlogits.data(), o.correct.data(), logits.data(),
                                       in.labels.data(), B, OC, 1.0f / static_cast<float>(B), fmt, pool);
  cpu::act_backward16(o.dact_relu.data(), dout.data(), pre.data(), dout.size(), Activation::ReLU, fmt, pool);
  cpu::act_backward16(o.dact_gelu.data(), dout.data(), pre.data(), dout.size(), Activation::GELU, fmt, pool);
  cpu::matmul_backward_weight16(o.dw.data(), dout.data(), x.data(), B, C, OC, fmt, ws, pool);
  cpu::bias_backward16(o.db.data(), dout.data(), B, OC, fmt, ws, pool);
  cpu::matmul_backward_data16(o.dinp.data(), dout.data(), w.data(), B, C, OC, fmt, ws, pool);
  return o;
}

// The fp32 kernels' outputs (on whatever inputs they were given), by name.
struct Outputs32 {
  std::vector<float> gx, out_lin, out_relu, pre_relu, out_gelu, pre_gelu, dlogits, dact_relu, dact_gelu, dw, db, dinp,
      losses;
  std::vector<int32_t> gy, correct;
};

// The fp32 kernels on the given fp32 operands (1 thread).
Outputs32 run32(const Inputs& in, const std::vector<float>& data, const std::vector<float>& x,
                const std::vector<float>& w, const std::vector<float>& b, const std::vector<float>& dout,
                const std::vector<float>& pre, const std::vector<float>& logits) {
  cpu::ThreadPool pool(1);
  const auto [B, C, OC] = in.sh;
  const auto bc = static_cast<size_t>(B * C), bo = static_cast<size_t>(B * OC);
  Outputs32 o;
  o.gx.resize(bc);
  o.gy.resize(B);
  cpu::gather_batch(o.gx.data(), o.gy.data(), data.data(), in.data_y.data(), in.idx.data(), B, C, pool);
  for (auto* v : {&o.out_lin, &o.out_relu, &o.pre_relu, &o.out_gelu, &o.pre_gelu, &o.dlogits, &o.dact_relu,
                  &o.dact_gelu})
    v->resize(bo);
  cpu::matmul_forward(o.out_lin.data(), static_cast<float*>(nullptr), x.data(), w.data(), b.data(), B, C, OC, false,
                      Activation::ReLU, pool);
  cpu::matmul_forward(o.out_relu.data(), o.pre_relu.data(), x.data(), w.data(), b.data(), B, C, OC, true,
                      Activation::ReLU, pool);
  cpu::matmul_forward(o.out_gelu.data(), o.pre_gelu.data(), x.data(), w.data(), b.data(), B, C, OC, true,
                      Activation::GELU, pool);
  o.losses.resize(B);
  o.correct.resize(B);
  cpu::softmax_xent_forward_backward(o.losses.data(), o.dlogits.data(), o.correct.data(), logits.data(),
                                     in.labels.data(), B, OC, 1.0f / static_cast<float>(B), pool);
  cpu::act_backward(o.dact_relu.data(), dout.data(), pre.data(), bo, Activation::ReLU, pool);
  cpu::act_backward(o.dact_gelu.data(), dout.data(), pre.data(), bo, Activation::GELU, pool);
  o.dw.resize(static_cast<size_t>(OC * C));
  o.db.resize(OC);
  o.dinp.resize(bc);
  cpu::matmul_backward_weight(o.dw.data(), dout.data(), x.data(), B, C, OC, pool);
  cpu::bias_backward(o.db.data(), dout.data(), B, OC, pool);
  cpu::matmul_backward_data(o.dinp.data(), dout.data(), w.data(), B, C, OC, pool);
  return o;
}

// The odd shapes of the brief: batch 1, 7, 33; features 5, 17; outputs 3, 10.
std::vector<Shape> odd_shapes() {
  std::vector<Shape> r;
  for (long B : {1L, 7L, 33L})
    for (long C : {5L, 17L})
      for (long OC : {3L, 10L}) r.push_back({B, C, OC});
  return r;
}

}  // namespace

TEST_CASE("16-bit kernels against the fp32 kernels on the unrounded inputs") {
  // Bounds to first order in u (u = 2^-11 fp16, 2^-8 bf16; rtol >= 2u + u², see rtol_for):
  //  - a sum of products of rounded operands is off by <= (2u + u²) Σ|terms| (Higham, "Accuracy and Stability of
  //    Numerical Algorithms", 2002, §3.1): relative to the terms, not to the sum, so an output that cancels to near 0
  //    needs atol = rtol · Σ|terms|; rounding the output adds u·|out| (inside rtol·|ref|). ReLU is 1-Lipschitz; GELU
  //    has |gelu'| <= 1.13, hence 1.2 · rtol · Σ|terms| for its output.
  //  - act_backward: dout · act'(pre) with both rounded: <= u|dout|(|act'| + |pre · act''|) <= 1.35 u |dout|
  //    (maximum over x for GELU; ReLU is exact unless pre underflows to 0, which these inputs never do).
  //  - cross-entropy: perturbing logits by u|z| moves the loss by <= 2u max|z| and p_k by <= 2u p_k max|z|, so
  //    losses get atol = rtol · max|z| and dlogits atol = rtol · max|z| · dloss_scale per row.
  //  - 1e-6 on top of each: the fp32 arithmetic's own error (C ≤ 17 terms of fp32 accumulation, exp's 1.3 ulp).
  cpu::ThreadPool pool(2);
  for (Storage16 fmt : kFormats)
    for (const Shape& s : odd_shapes()) {
      CAPTURE(std::string(cpu::to_string(fmt)));
      CAPTURE(s.B);
      CAPTURE(s.C);
      CAPTURE(s.OC);
      const double rtol = rtol_for(fmt), eps32 = 1e-6;
      const auto [B, C, OC] = s;
      const Inputs in(s, 200 + static_cast<uint64_t>(s.B * 1000 + s.C * 10 + s.OC));
      const auto x = in.x();
      const Outputs32 ref = run32(in, in.data, x, in.w, in.b, in.dout, in.pre, in.logits);
      cpu::Workspace16 ws;
      const Outputs got = run16(in, fmt, pool, ws);

      std::vector<double> fwd(B * OC), dw(OC * C), db(OC), dinp(B * C), act(B * OC), loss(B), dlog(B * OC);
      for (long b = 0; b < B; ++b)
        for (long o = 0; o < OC; ++o) {
          double m = std::fabs(in.b[o]);
          for (long c = 0; c < C; ++c) m += std::fabs(x[b * C + c] * in.w[o * C + c]);
          fwd[b * OC + o] = rtol * m + eps32;
        }
      for (long o = 0; o < OC; ++o)
        for (long c = 0; c < C; ++c) {
          double m = 0;
          for (long b = 0; b < B; ++b) m += std::fabs(in.dout[b * OC + o] * x[b * C + c]);
          dw[o * C + c] = rtol * m + eps32;
        }
      for (long o = 0; o < OC; ++o) {
        double m = 0;
        for (long b = 0; b < B; ++b) m += std::fabs(in.dout[b * OC + o]);
        db[o] = rtol * m + eps32;
      }
      for (long b = 0; b < B; ++b)
        for (long c = 0; c < C; ++c) {
          double m = 0;
          for (long o = 0; o < OC; ++o) m += std::fabs(in.dout[b * OC + o] * in.w[o * C + c]);
          dinp[b * C + c] = rtol * m + eps32;
        }
      for (size_t i = 0; i < act.size(); ++i) act[i] = rtol * std::fabs(in.dout[i]) + eps32;
      for (long b = 0; b < B; ++b) {
        double zmax = 0;
        for (long k = 0; k < OC; ++k) zmax = std::max(zmax, std::fabs(double(in.logits[b * OC + k])));
        loss[b] = rtol * zmax + eps32;
        for (long k = 0; k < OC; ++k) dlog[b * OC + k] = rtol * zmax / static_cast<double>(B) + eps32;
      }
      std::vector<double> fwd_gelu(fwd);
      for (auto& a : fwd_gelu) a *= 1.2;

      check_close("gather x", from16(got.gx, fmt), ref.gx, std::vector<double>(ref.gx.size(), 3e-8), rtol / 2);  // 3e-8: an fp16 subnormal's error
      check_close("forward out", from16(got.out_lin, fmt), ref.out_lin, fwd, rtol);
      check_close("forward ReLU preact", from16(got.pre_relu, fmt), ref.pre_relu, fwd, rtol);
      check_close("forward ReLU out", from16(got.out_relu, fmt), ref.out_relu, fwd, rtol);
      check_close("forward GELU preact", from16(got.pre_gelu, fmt), ref.pre_gelu, fwd, rtol);
      check_close("forward GELU out", from16(got.out_gelu, fmt), ref.out_gelu, fwd_gelu, rtol);
      check_close("losses", got.losses, ref.losses, loss, rtol);
      check_close("dlogits", from16(got.dlogits, fmt), ref.dlogits, dlog, rtol);
      check_close("act_backward ReLU", from16(got.dact_relu, fmt), ref.dact_relu, act, rtol);
      check_close("act_backward GELU", from16(got.dact_gelu, fmt), ref.dact_gelu, act, rtol);
      check_close("dweight", from16(got.dw, fmt), ref.dw, dw, rtol);
      check_close("dbias", from16(got.db, fmt), ref.db, db, rtol);
      check_close("dinp", from16(got.dinp, fmt), ref.dinp, dinp, rtol);
    }
}

TEST_CASE("16-bit optimizers: fp32 masters updated exactly as by the fp32 optimizer on the widened grads") {
  cpu::ThreadPool pool1(1), pool2(2);
  // grad_scale 1: the grads as they are; 2^-10: loss-scaled grads unscaled in the optimizer, exactly the fp32
  // optimizer on widened grads multiplied by 2^-10 (a power of two, so the product is exact: what a loss scale is).
  for (float grad_scale : {1.0f, 0x1p-10f})
    for (Storage16 fmt : kFormats)
      for (size_t N : {size_t{1}, size_t{7}, size_t{3001}, size_t{40000}})  // 40000: several chunks on each thread
        for (cpu::ThreadPool* pool : {&pool1, &pool2})
          for (bool adamw : {true, false}) {
            CAPTURE(grad_scale);
            CAPTURE(std::string(cpu::to_string(fmt)));
            CAPTURE(N);
            CAPTURE(pool->size());
            CAPTURE(adamw);
            std::vector<float> p = uniform(N, 11), m(N, 0.0f), v(N, 0.0f);
            std::vector<float> p_ref = p, m_ref = m, v_ref = v;
            std::vector<uint16_t> p16(N);
            cpu::ThreadPool ref_pool(1);
            for (long t = 1; t <= 3; ++t) {
              const float range = 0.1f / grad_scale;  // scaled grads: 102.4 fits fp16 and bf16
              const auto g16 = to16(uniform(N, 20 + static_cast<uint64_t>(t), -range, range), fmt);
              auto g = from16(g16, fmt);
              for (auto& x : g) x *= grad_scale;
              if (adamw) {
                cpu::adamw_update16(p.data(), m.data(), v.data(), p16.data(), g16.data(), N, 1e-2f, 0.9f, 0.999f,
                                    1e-8f, 0.01f, t, fmt, *pool, grad_scale);
                cpu::adamw_update(p_ref.data(), m_ref.data(), v_ref.data(), g.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f,
                                  0.01f, t, ref_pool);
              } else {
                cpu::sgd_update16(p.data(), m.data(), p16.data(), g16.data(), N, 1e-2f, 0.9f, 0.01f, t, fmt, *pool,
                                  grad_scale);
                cpu::sgd_update(p_ref.data(), m_ref.data(), g.data(), N, 1e-2f, 0.9f, 0.01f, t, ref_pool);
              }
              check_bits("master params", p, p_ref);
              check_bits("m / momentum", m, m_ref);
              check_bits("v", v, v_ref);
              check_bits("16-bit weights", p16, to16(p_ref, fmt));
            }
          }
}

TEST_CASE("16-bit optimizers: the default grad_scale is 1 (callers written before loss scaling)") {
  cpu::ThreadPool pool(2);
  const size_t N = 5000;
  for (Storage16 fmt : kFormats) {
    CAPTURE(std::string(cpu::to_string(fmt)));
    const auto g16 = to16(uniform(N, 3, -0.1f, 0.1f), fmt);
    std::vector<float> p = uniform(N, 4), m(N, 0.0f), v(N, 0.0f);
    std::vector<float> p1 = p, m1 = m, v1 = v;
    std::vector<uint16_t> w(N), w1(N);
    cpu::adamw_update16(p.data(), m.data(), v.data(), w.data(), g16.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, 1,
                        fmt, pool);
    cpu::adamw_update16(p1.data(), m1.data(), v1.data(), w1.data(), g16.data(), N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f,
                        1, fmt, pool, 1.0f);
    check_bits("master params", p, p1);
    check_bits("16-bit weights", w, w1);
  }
}

TEST_CASE("check_finite_grads16 finds a single inf or NaN anywhere, and nothing in finite values") {
  cpu::ThreadPool pool1(1), pool2(2);
  const size_t N = 300001;  // several chunks per thread
  for (Storage16 fmt : kFormats)
    for (cpu::ThreadPool* pool : {&pool1, &pool2}) {
      CAPTURE(std::string(cpu::to_string(fmt)));
      CAPTURE(pool->size());
      // Finite extremes: the largest finite value, the smallest subnormal, -0.
      auto g = to16(uniform(N, 8, -1, 1), fmt);
      const uint16_t max_finite = fmt == Storage16::FP16 ? 0x7bff : 0x7f7f;
      g[0] = max_finite;
      g[1] = static_cast<uint16_t>(max_finite | 0x8000);
      g[2] = 0x0001;
      g[3] = 0x8000;
      CHECK_FALSE(cpu::check_finite_grads16(g.data(), N, fmt, *pool));
      CHECK_FALSE(cpu::check_finite_grads16(g.data(), 0, fmt, *pool));
      const uint16_t inf = fmt == Storage16::FP16 ? 0x7c00 : 0x7f80;
      const uint16_t nan = fmt == Storage16::FP16 ? 0x7e00 : 0x7fc0;
      for (size_t at : {size_t{0}, size_t{12345}, N / 2, N - 1})
        for (uint16_t bad : {inf, static_cast<uint16_t>(inf | 0x8000), nan, static_cast<uint16_t>(inf | 1)}) {
          CAPTURE(at);
          CAPTURE(bad);
          const uint16_t keep = g[at];
          g[at] = bad;
          CHECK(cpu::check_finite_grads16(g.data(), N, fmt, *pool));
          CHECK_FALSE(cpu::check_finite_grads16(g.data(), at, fmt, *pool));  // the range ends before it
          g[at] = keep;
        }
    }
}

TEST_CASE("Workspace16 grows to the largest call's fp32 operands, then allocates nothing") {
  cpu::ThreadPool pool(2);
  auto pad = [](long n) { return (static_cast<size_t>(n) + 15) / 16 * 16; };
  for (Storage16 fmt : kFormats) {
    CAPTURE(std::string(cpu::to_string(fmt)));
    const Shape big{33, 17, 10}, small{7, 5, 3};
    const Inputs in_big(big, 5), in_small(small, 6);
    cpu::Workspace16 ws;
    CHECK(ws.bytes() == 0);
    run16(in_big, fmt, pool, ws);
    const auto [B, C, OC] = big;
    // The largest call of run16 is matmul_forward16 with apply_act (documented in kernels16.hpp).
    const size_t expected = 4 * (pad(B * C) + pad(OC * C) + pad(OC) + 2 * pad(B * OC));
    CHECK(ws.bytes() == expected);
    for (int i = 0; i < 3; ++i) {
      run16(in_big, fmt, pool, ws);
      run16(in_small, fmt, pool, ws);
      CHECK(ws.bytes() == expected);
    }
    ws.release();
    CHECK(ws.bytes() == 0);
  }
}

TEST_CASE("Workspace16::carve: disjoint regions 64 bytes apart from the start, stable while large enough") {
  cpu::Workspace16 ws;
  float* r[3];
  const size_t sizes[3] = {5, 0, 33};
  ws.carve(r, sizes, 3);
  CHECK(r[1] - r[0] == 16);
  CHECK(r[2] - r[1] == 0);  // an empty region takes no room
  CHECK(ws.bytes() == 4 * (16 + 48));
  float* first = r[0];
  const size_t smaller[2] = {20, 20};
  ws.carve(r, smaller, 2);
  CHECK(r[0] == first);
  CHECK(r[1] - r[0] == 32);
  CHECK(ws.bytes() == 4 * 64);
}

TEST_CASE("widen16 / narrow16 over the pool equal the scalar conversions") {
  cpu::ThreadPool pool(2);
  const auto v = uniform(70001, 3, -70000, 70000);  // beyond fp16's range too: rounds to inf
  for (Storage16 fmt : kFormats) {
    CAPTURE(std::string(cpu::to_string(fmt)));
    std::vector<uint16_t> h(v.size());
    cpu::narrow16(h.data(), v.data(), v.size(), fmt, pool);
    check_bits("narrow16", h, to16(v, fmt));
    std::vector<float> f(v.size());
    cpu::widen16(f.data(), h.data(), h.size(), fmt, pool);
    check_bits("widen16", f, from16(h, fmt));
  }
}
