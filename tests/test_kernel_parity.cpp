// The kernel parity test: one test case per kernel of the kernel table, named as the kernel (ctest runs each as
// test_kernel_parity.<kernel>, so a failure names its kernel, and runs them in parallel). Each case lists the shapes
// and settings its kernel runs with and how its inputs are filled where "uniform in [-1, 1]" would not do (labels,
// indices, the loss scaler's state, non-negative second moments...); test::check_parity (parity.cpp) runs them on the
// GPU and the tuned CPU twin against the kernel's plain reference in double, in every precision and GPU variant.
// Adding a kernel = one more TEST_CASE here.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "parity.hpp"

using core::Op;
using test::KernelCase;
using test::check_parity;
using test::gemm_shapes;
using test::GemmShape;
using test::scaler_before_step;
using test::shape_label;
using test::uniform;

namespace {

// The GEMM shapes of the three backward kernels of a dense layer.
std::vector<KernelCase> backward_cases(Op op) {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (const GemmShape& s : gemm_shapes()) {
    const size_t bc = size_t(s.B * s.C), bo = size_t(s.B * s.OC), oc = size_t(s.OC * s.C);
    std::vector<size_t> elements = op == Op::matmul_backward_weight ? std::vector<size_t>{oc, bo, bc}
                                   : op == Op::bias_backward       ? std::vector<size_t>{size_t(s.OC), bo}
                                                                  : std::vector<size_t>{bc, bo, oc};
    KernelCase c{shape_label(s.B, s.C, s.OC), {}, {}, elements, {}};
    c.entry = {.op = op, .B = s.B, .C = s.C, .OC = s.OC};
    if (!s.sixteen_bit) c.gpu = KernelCase::Gpu::Fp32;
    add(c);
  }
  return out;
}

// AdamW and SGD: several sizes (the GPU runs 4 at a time, N % 4 one by one), the first and a later step, and fp16's
// overflow (skip).
std::vector<KernelCase> optimizer_cases(Op op) {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (size_t N : {size_t{1}, size_t{7}, size_t{777}, size_t{40000}})  // GPU: 4 at a time, N % 4 one by one
    for (long t : {1L, 3L})
      for (bool overflow : {false, true}) {  // overflow: fp16's check_finite_grads found an inf (skip)
        if (overflow && (N != 777 || t != 3)) continue;
        const bool adamw = op == Op::adamw_update;
        KernelCase c{"N=" + std::to_string(N) + " t=" + std::to_string(t) + (overflow ? " found_inf" : ""), {}, {},
                     adamw ? std::vector<size_t>{N, N, N, N, N, 1} : std::vector<size_t>{N, N, N, N, 1}, {}};
        c.entry.N = N;
        c.step.t = t;
        c.step.lr = adamw ? 1e-2f : 0.1f;
        c.step.weight_decay = adamw ? 0.01f : 1e-3f;
        const float scale = 256;  // fp16: the gradients arrive multiplied by the loss scale
        c.fill = [t, overflow, scale](const std::string& b, std::vector<double>& v, core::Pcg32& rng,
                                      core::Precision p) {
          const bool scaled = p == core::Precision::FP16;
          if (b == "grads")
            for (auto& x : v) x = uniform(rng, -0.1, 0.1) * (scaled ? scale : 1);
          if (b == "m" || b == "momentum_buf")
            for (auto& x : v) x = t == 1 ? 0.0 : uniform(rng, -0.05, 0.05);
          if (b == "v")
            for (auto& x : v) x = t == 1 ? 0.0 : uniform(rng, 0, 0.01);
          if (b == "scaler") scaler_before_step(v, scale, t, overflow, 0.9f, 0.999f);
        };
        add(c);
      }
  {  // extreme: parameters near the fp16 limit and up to 100, gradients up to 100 (times the loss scale in fp16:
     // 25600 stays finite), moments to match
    const bool adamw = op == Op::adamw_update;
    const size_t N = 1003;
    KernelCase c{"N=1003 t=3 extreme", {}, {},
                 adamw ? std::vector<size_t>{N, N, N, N, N, 1} : std::vector<size_t>{N, N, N, N, 1}, {}};
    c.entry.N = N;
    c.step.t = 3;
    c.step.lr = adamw ? 1e-2f : 0.1f;
    c.step.weight_decay = adamw ? 0.01f : 1e-3f;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision p) {
      const double scale = p == core::Precision::FP16 ? 256 : 1;
      if (b == "params") test::fill_extreme(v, rng);
      if (b == "grads")
        for (auto& x : v) x = uniform(rng, -100, 100) * scale;
      if (b == "m" || b == "momentum_buf")
        for (auto& x : v) x = uniform(rng, -100, 100);
      if (b == "v")
        for (auto& x : v) x = uniform(rng, 0, 1e4);
      if (b == "scaler") scaler_before_step(v, 256.0f, 3, false, 0.9f, 0.999f);
    };
    add(c);
  }
  return out;
}

}  // namespace

TEST_CASE("gather_batch") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  // C % 4 == 0 takes the GPU's 4-wide copy (2 x 8, 1000 x 100); the last: split over threads
  for (auto [B, C] : {std::pair{1L, 5L}, {2L, 8L}, {7L, 13L}, {33L, 70L}, {1000L, 100L}}) {
    const long N = B + 17, first = 9;
    KernelCase c{"B=" + std::to_string(B) + " C=" + std::to_string(C) + " first=9", {}, {},
                 {size_t(B * C), size_t(B), size_t(N * C), size_t(N), size_t(first + N)}, {}};
    c.entry.B = B;
    c.entry.C = C;
    c.step.first = static_cast<uint32_t>(first);
    c.fill = [N](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "y")
        for (auto& x : v) x = rng.next_u32() % 10;
      if (b == "order")  // rows in a shuffled order (every index < N)
        for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 17 + 5) % static_cast<size_t>(N));
    };
    add(c);
  }
  check_parity(Op::gather_batch, out);
}

TEST_CASE("matmul_forward") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (const GemmShape& s : gemm_shapes())
    for (int mode = 0; mode < 5; ++mode) {
      // linear (no activation: the logits), then each activation, then --unfused (no epilogue: the plain sums)
      const bool act = mode >= 1 && mode <= 3;
      const core::Activation activation = act ? core::kActivations[mode - 1] : core::Activation::ReLU;
      const std::string name = mode == 0 ? " linear" : mode == 4 ? " unfused" : std::string(" ") + core::to_string(activation);
      KernelCase c{shape_label(s.B, s.C, s.OC) + name,
                   {},
                   {},
                   {size_t(s.B * s.OC), size_t(s.B * s.OC), size_t(s.B * s.C), size_t(s.OC * s.C), size_t(s.OC)},
                   {}};
      c.entry = {.op = Op::matmul_forward, .activation = act, .epilogue = mode < 4, .B = s.B, .C = s.C, .OC = s.OC};
      c.step.activation = activation;
      // The epilogue (bias, activation, preact) is one piece of code after every tiling, on fp32 values: ReLU, which
      // adds the bias and stores both outputs, on every GPU variant; the other modes on the default one in fp32.
      c.gpu = mode != 1 ? KernelCase::Gpu::DefaultFp32 : s.sixteen_bit ? KernelCase::Gpu::EveryVariant
                                                                        : KernelCase::Gpu::Fp32;
      add(c);
    }
  // The GELU and SiLU epilogues on pre-activations far past where tanh and the sigmoid saturate: inputs up to 100,
  // weights up to 10.
  for (core::Activation act : {core::Activation::GELU, core::Activation::SiLU}) {
    KernelCase c{std::string("B=7 C=17 OC=10 ") + core::to_string(act) + " extreme", {}, {}, {70, 70, 119, 170, 10}, {}};
    c.entry = {.op = Op::matmul_forward, .activation = true, .epilogue = true, .B = 7, .C = 17, .OC = 10};
    c.step.activation = act;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "inp") test::fill_extreme(v, rng, 100);
      if (b == "weight" || b == "bias")
        for (auto& x : v) x = uniform(rng, -10, 10);
    };
    add(c);
  }
  check_parity(Op::matmul_forward, out);
}

TEST_CASE("softmax_xent_forward_backward") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  // (B, K, evaluation). The GPU holds a row of up to 16 classes in registers, read 4-wide when K % 4 == 0 (4, 16),
  // and reads wider rows twice from memory (17, 270); 130 rows: several workgroups, the last one partial.
  // 260 x 270: split over the CPU's threads.
  for (auto [B, K, eval] : {std::tuple{1L, 3L, false}, {1L, 10L, false}, {7L, 3L, false}, {7L, 10L, false},
                            {33L, 3L, false}, {33L, 10L, false}, {7L, 3L, true}, {7L, 10L, true},
                            {5L, 4L, false}, {130L, 10L, false}, {130L, 16L, true}, {70L, 16L, false},
                            {70L, 17L, false}, {260L, 270L, false}}) {
    const long off = eval ? 3 : 0;  // evaluation writes at out_offset
    KernelCase c{"B=" + std::to_string(B) + " K=" + std::to_string(K) + (eval ? " evaluation" : ""), {}, {},
                 {size_t(B + off), size_t(B * K), size_t(B + off), size_t(B * K), size_t(B), 1}, {}};
    c.entry.B = B;
    c.entry.C = K;
    c.step.evaluation = eval;
    c.step.out_offset = static_cast<uint32_t>(off);
    const size_t classes = static_cast<size_t>(K);
    c.fill = [classes](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "logits")
        for (auto& x : v) x = uniform(rng, -4, 4);
      if (b == "labels")
        for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7 + 3) % classes);
      if (b == "scaler") scaler_before_step(v, 4.0f, 1, false, 0.9f, 0.999f);  // dlogits times 4
    };
    add(c);
  }
  for (long K : {10L, 17L}) {  // extreme logits: rows in registers and in memory
    KernelCase c{"B=9 K=" + std::to_string(K) + " extreme", {}, {}, {9, size_t(9 * K), 9, size_t(9 * K), 9, 1}, {}};
    c.entry.B = 9;
    c.entry.C = K;
    const size_t classes = static_cast<size_t>(K);
    c.fill = [classes](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "logits") test::fill_extreme(v, rng);
      if (b == "labels")
        for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7 + 3) % classes);
      if (b == "scaler") scaler_before_step(v, 4.0f, 1, false, 0.9f, 0.999f);
    };
    add(c);
  }
  for (long K : {10L, 17L}) {  // a transformer's masked positions (label -1): loss 0, correct 0, no gradient
    for (const bool eval : {false, true}) {
      KernelCase c{"B=12 K=" + std::to_string(K) + " masked" + (eval ? " evaluation" : ""), {}, {},
                   {12, size_t(12 * K), 12, size_t(12 * K), 12, 1}, {}};
      c.entry.B = 12;
      c.entry.C = K;
      c.entry.N = 7;  // the rows that count: the gradient of their mean
      c.step.evaluation = eval;
      const size_t classes = static_cast<size_t>(K);
      c.fill = [classes](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
        if (b == "logits")
          for (auto& x : v) x = uniform(rng, -4, 4);
        if (b == "labels")
          for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 1 ? -1.0 : double((i * 7 + 3) % classes);
        if (b == "scaler") scaler_before_step(v, 4.0f, 1, false, 0.9f, 0.999f);
      };
      add(c);
    }
  }
  check_parity(Op::softmax_xent_forward_backward, out);
}

TEST_CASE("argmax") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  // (B, K): one row, one class, rows over several workgroups and split over the CPU's threads; logits from a few
  // values, so that rows hold equal maxima (the first one wins), and extreme ones.
  for (auto [B, K] : {std::pair{1L, 1L}, {1L, 10L}, {7L, 3L}, {130L, 10L}, {260L, 17L}}) {
    KernelCase c{"B=" + std::to_string(B) + " K=" + std::to_string(K), {}, {}, {size_t(B), size_t(B * K)}, {}};
    c.entry.B = B;
    c.entry.C = K;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "logits")
        for (auto& x : v) x = double(rng.next_u32() % 4) - 1;  // -1, 0, 1, 2: ties in most rows
    };
    add(c);
  }
  KernelCase extreme{"B=9 K=10 extreme", {}, {}, {9, 90}, {}};
  extreme.entry.B = 9;
  extreme.entry.C = 10;
  extreme.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
    if (b == "logits") test::fill_extreme(v, rng);
  };
  add(extreme);
  check_parity(Op::argmax, out);
}

TEST_CASE("loss_reduce") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (long B : {1L, 7L, 300L}) {
    KernelCase c{"B=" + std::to_string(B) + " slot=2", {}, {}, {4, size_t(B)}, {}};
    c.entry.B = B;
    c.step.slot = 2;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "losses")
        for (auto& x : v) x = uniform(rng, 0, 5);
    };
    add(c);
  }
  KernelCase masked{"B=300 count=170 (a masked mean)", {}, {}, {4, 300}, {}};
  masked.entry.B = 300;
  masked.entry.N = 170;
  masked.step.slot = 1;
  add(masked);
  check_parity(Op::loss_reduce, out);
}

TEST_CASE("act_backward") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (auto act : core::kActivations)
    for (size_t N : {size_t{1}, size_t{7}, size_t{1002}, size_t{70000}}) {  // GPU: 4 at a time, N % 4 one by one
      KernelCase c{std::string(core::to_string(act)) + " N=" + std::to_string(N) + (N == 1002 ? " in place" : ""),
                   {}, {}, {N, N, N}, {}};
      c.entry.N = N;
      c.step.activation = act;
      if (N == 1002) c.alias_of_first = 1;  // as the GPU trainer runs it: dpreact overwrites dout
      c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
        if (b == "preact")
          for (auto& x : v) x = uniform(rng, -3, 3);
      };
      add(c);
    }
  for (auto act : core::kActivations) {
    KernelCase c{std::string(core::to_string(act)) + " N=1003 extreme", {}, {}, {1003, 1003, 1003}, {}};
    c.entry.N = 1003;
    c.step.activation = act;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "preact") test::fill_extreme(v, rng);
    };
    add(c);
  }
  check_parity(Op::act_backward, out);
}

TEST_CASE("bias_add") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (const GemmShape& s : gemm_shapes()) {
    KernelCase c{shape_label(s.B, s.OC, s.OC) + " in place", {}, {}, {size_t(s.B * s.OC), size_t(s.OC)}, {}};
    c.entry = {.op = Op::bias_add, .B = s.B, .OC = s.OC};
    add(c);
  }
  check_parity(Op::bias_add, out);
}

TEST_CASE("act_forward") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  for (auto act : core::kActivations)
    for (size_t N : {size_t{1}, size_t{7}, size_t{1002}, size_t{70000}}) {  // GPU: 4 at a time, N % 4 one by one
      KernelCase c{std::string(core::to_string(act)) + " N=" + std::to_string(N) + " in place", {}, {}, {N, N}, {}};
      c.entry.N = N;
      c.entry.B = 1;
      c.entry.OC = static_cast<long>(N);
      c.step.activation = act;
      c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
        if (b == "out")
          for (auto& x : v) x = uniform(rng, -3, 3);
      };
      add(c);
    }
  for (auto act : core::kActivations) {
    KernelCase c{std::string(core::to_string(act)) + " N=1003 in place extreme", {}, {}, {1003, 1003}, {}};
    c.entry.N = 1003;
    c.entry.B = 1;
    c.entry.OC = 1003;
    c.step.activation = act;
    c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "out") test::fill_extreme(v, rng);
    };
    add(c);
  }
  check_parity(Op::act_forward, out);
}

TEST_CASE("check_finite_grads") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  // Several CPU chunks; on the GPU 4 at a time, the last 2 one by one (the non-finite at N - 1 is one of them).
  const size_t N = 300002;
  const double bad_values[] = {INFINITY, -INFINITY, NAN};
  for (int bad = -1; bad < 3; ++bad)
    for (size_t at : {size_t{0}, size_t{12345}, N - 1}) {
      if (bad < 0 && at != 0) continue;
      KernelCase c{bad < 0 ? "finite (the largest fp16 values)" : "one non-finite at " + std::to_string(at), {},
                   {}, {1, N}, {}};
      c.entry.N = N;
      const double value = bad >= 0 ? bad_values[bad] : 0.0;
      c.fill = [bad, at, value](const std::string& b, std::vector<double>& v, core::Pcg32&, core::Precision) {
        if (b == "scaler") scaler_before_step(v, 1.0f, 1, false, 0.9f, 0.999f);
        if (b == "grads") {
          for (size_t i = 0; i < v.size(); ++i) v[i] = 65504.0 * double(i % 17) / 16 * (i % 2 ? 1 : -1);
          if (bad >= 0) v[at] = value;
        }
      };
      add(c);
    }
  check_parity(Op::check_finite_grads, out);
}

TEST_CASE("update_loss_scale") {
  std::vector<KernelCase> out;
  auto add = [&](KernelCase c) { out.push_back(std::move(c)); };
  // (found_inf, growth_tracker before, scale): a clean step, a growth, an overflow, a growth that would be inf.
  for (auto [found_inf, tracker, scale] :
       {std::tuple{0u, 0u, 1024.0f}, {0u, 2u, 1024.0f}, {1u, 1u, 1024.0f}, {0u, 2u, 0x1p127f}}) {
    KernelCase c{"found_inf=" + std::to_string(found_inf) + " tracker=" + std::to_string(tracker) +
                     " scale=" + std::to_string(scale),
                 {}, {}, {1, 4}, {}};
    c.step.slot = 3;
    c.step.scaler = {1024.0f, 2.0f, 0.5f, 3};  // growth every 3 clean steps
    c.fill = [found_inf, tracker, scale](const std::string& b, std::vector<double>& v, core::Pcg32&,
                                         core::Precision) {
      if (b == "scaler") v = {scale, double(tracker), 5, double(found_inf), 7, 0.5, 0.25, 0};
      if (b == "history")
        for (auto& x : v) x = 0;
    };
    add(c);
  }
  check_parity(Op::update_loss_scale, out);
}

TEST_CASE("matmul_backward_weight") { check_parity(Op::matmul_backward_weight, backward_cases(Op::matmul_backward_weight)); }

TEST_CASE("bias_backward") {
  std::vector<KernelCase> cases = backward_cases(Op::bias_backward);
  // A convolution's bias gradient sums B * OH * OW rows: enough rows for several of the CPU twin's partial sums.
  KernelCase c{shape_label(2500, 1, 37), {}, {}, {37, 2500 * 37}, {}};
  c.entry = {.op = Op::bias_backward, .B = 2500, .C = 1, .OC = 37};
  c.gpu = KernelCase::Gpu::Fp32;
  cases.push_back(c);
  check_parity(Op::bias_backward, cases);
}

TEST_CASE("matmul_backward_data") { check_parity(Op::matmul_backward_data, backward_cases(Op::matmul_backward_data)); }

TEST_CASE("adamw_update") { check_parity(Op::adamw_update, optimizer_cases(Op::adamw_update)); }

TEST_CASE("sgd_update") { check_parity(Op::sgd_update, optimizer_cases(Op::sgd_update)); }

namespace {

// LayerNorm over rows x features: one row of one feature (xhat is 0: the output is the shift), odd sizes, a
// transformer's width, rows past the CPU twin's blocks of 256 partial sums. The backward kernels take mean and rstd
// as inputs (their formulas hold for any), drawn where the forward would put them.
std::vector<KernelCase> layernorm_cases(Op op) {
  std::vector<KernelCase> out;
  for (const auto& [rows, C, accumulate] : std::vector<std::tuple<long, long, bool>>{
           {1, 1, false}, {3, 7, false}, {37, 64, false}, {300, 130, false}, {2, 768, false}, {3, 7, true},
           {37, 64, true}}) {
    if (accumulate && op != Op::layernorm_backward) continue;  // din added to (a transformer's residual stream)
    const size_t r = size_t(rows), c = size_t(C), rc = r * c;
    std::vector<size_t> elements = op == Op::layernorm_forward    ? std::vector<size_t>{rc, r, r, rc, c, c}
                                   : op == Op::layernorm_backward ? std::vector<size_t>{rc, rc, rc, c, r, r}
                                                                  : std::vector<size_t>{c, c, rc, rc, r, r};
    KernelCase k{"rows=" + std::to_string(rows) + " C=" + std::to_string(C) + (accumulate ? " accumulate" : ""), {},
                 {}, elements, {}};
    k.entry = {.op = op, .B = rows, .C = C};
    k.entry.accumulate = accumulate;
    k.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "mean_")
        for (auto& x : v) x = uniform(rng, -0.5, 0.5);
      if (b == "rstd_")
        for (auto& x : v) x = uniform(rng, 0.5, 2);
    };
    out.push_back(k);
  }
  return out;
}

}  // namespace

TEST_CASE("layernorm_forward") { check_parity(Op::layernorm_forward, layernorm_cases(Op::layernorm_forward)); }

TEST_CASE("layernorm_backward") { check_parity(Op::layernorm_backward, layernorm_cases(Op::layernorm_backward)); }

TEST_CASE("layernorm_backward_params") {
  check_parity(Op::layernorm_backward_params, layernorm_cases(Op::layernorm_backward_params));
}

namespace {

// The fused attention kernels' shapes (B, T, heads, D): one position; a partial tile of 37 rows and 3 heads; a head
// size of 1 over three tiles; several tiles of both kinds; the largest head (64 features: the shaders' shared tiles
// are then 16 KiB, Vulkan's minimum). `elements` gives a case's binding sizes from its rows (B*T), C, B*heads*T and
// the naive form's matrix (B*heads*T*T).
std::vector<KernelCase> attention_cases(Op op,
                                        std::vector<size_t> (*elements)(size_t rows, size_t C, size_t stats, size_t matrix)) {
  std::vector<KernelCase> cases;
  for (const auto& [B, T, heads, D] :
       std::vector<std::array<long, 4>>{{1, 1, 1, 1}, {2, 37, 3, 8}, {1, 70, 1, 1}, {2, 130, 2, 16}, {1, 65, 1, 64}}) {
    const size_t C = size_t(heads * D), rows = size_t(B * T);
    KernelCase k{"B=" + std::to_string(B) + " T=" + std::to_string(T) + " heads=" + std::to_string(heads) +
                     " D=" + std::to_string(D),
                 {},
                 {},
                 elements(rows, C, size_t(B * heads * T), size_t(B * heads * T * T)),
                 {}};
    k.entry = {.op = op, .B = B, .C = long(C)};
    k.entry.T = T;
    k.entry.heads = int(heads);
    cases.push_back(k);
  }
  return cases;
}

}  // namespace

TEST_CASE("attention_forward_fused") {
  check_parity(Op::attention_forward_fused,
               attention_cases(Op::attention_forward_fused, [](size_t rows, size_t C, size_t stats, size_t) {
                 return std::vector<size_t>{rows * C, stats, rows * 3 * C};  // y, lse, qkv
               }));
}

// The backward's inputs are drawn uniformly, the log-sum-exp and delta too (their formulas hold for any values; the
// reference test checks them against the forward's, test_cpu_transformer_reference).
TEST_CASE("attention_backward_dq") {
  check_parity(Op::attention_backward_dq,
               attention_cases(Op::attention_backward_dq, [](size_t rows, size_t C, size_t stats, size_t) {
                 return std::vector<size_t>{rows * 3 * C, stats, rows * 3 * C, rows * C, stats, rows * C};
               }));  // dqkv, delta, qkv, y, lse, dy
}

TEST_CASE("attention_backward_dkv") {
  check_parity(Op::attention_backward_dkv,
               attention_cases(Op::attention_backward_dkv, [](size_t rows, size_t C, size_t stats, size_t) {
                 return std::vector<size_t>{rows * 3 * C, rows * 3 * C, stats, stats, rows * C};
               }));  // dqkv, qkv, lse, delta, dy
}

// The naive attention's kernels (--attention naive), on the same shapes. Their matrix inputs are drawn uniformly
// (scores, probabilities or the scores' gradient: each formula holds for any values; entries after the diagonal
// too, which each kernel that writes the matrix sets to 0).
TEST_CASE("attention_naive_scores") {
  check_parity(Op::attention_naive_scores,
               attention_cases(Op::attention_naive_scores, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{matrix, rows * 3 * C};  // att, qkv
               }));
}

TEST_CASE("attention_naive_softmax") {
  check_parity(Op::attention_naive_softmax,
               attention_cases(Op::attention_naive_softmax, [](size_t, size_t, size_t, size_t matrix) {
                 return std::vector<size_t>{matrix};  // att
               }));
}

TEST_CASE("attention_naive_values") {
  check_parity(Op::attention_naive_values,
               attention_cases(Op::attention_naive_values, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{rows * C, matrix, rows * 3 * C};  // y, att, qkv
               }));
}

TEST_CASE("attention_naive_dv") {
  check_parity(Op::attention_naive_dv,
               attention_cases(Op::attention_naive_dv, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{rows * 3 * C, matrix, rows * C};  // dqkv, att, dy
               }));
}

TEST_CASE("attention_naive_dscores") {
  check_parity(Op::attention_naive_dscores,
               attention_cases(Op::attention_naive_dscores, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{matrix, rows * 3 * C, rows * C, rows * C};  // att, qkv, y, dy
               }));
}

TEST_CASE("attention_naive_dq") {
  check_parity(Op::attention_naive_dq,
               attention_cases(Op::attention_naive_dq, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{rows * 3 * C, matrix, rows * 3 * C};  // dqkv, att, qkv
               }));
}

TEST_CASE("attention_naive_dk") {
  check_parity(Op::attention_naive_dk,
               attention_cases(Op::attention_naive_dk, [](size_t rows, size_t C, size_t, size_t matrix) {
                 return std::vector<size_t>{rows * 3 * C, matrix, rows * 3 * C};  // dqkv, att, qkv
               }));
}

namespace {

// The embeddings over (B, T, C, V): one token of one feature; repeated tokens of a small vocabulary; a partial
// workgroup of positions; the fortunes corpus's 106-byte vocabulary over 130 positions. The tokens are drawn from
// 0..V-1 (the data is checked for that when read). The backward also adds into a tied dwte (accumulate).
std::vector<KernelCase> embedding_cases(Op op) {
  std::vector<KernelCase> out;
  for (const auto& [B, T, C, V] :
       std::vector<std::array<long, 4>>{{1, 1, 1, 1}, {2, 7, 5, 3}, {3, 33, 64, 50}, {2, 130, 16, 106}}) {
    for (const bool accumulate : {false, true}) {
      if (accumulate && op != Op::embedding_backward) continue;
      const size_t positions = size_t(B * T), c = size_t(C);
      std::vector<size_t> elements = op == Op::embedding_forward
                                         ? std::vector<size_t>{positions * c, positions, size_t(V) * c, size_t(T) * c}
                                         : std::vector<size_t>{size_t(V) * c, size_t(T) * c, positions, positions * c};
      KernelCase k{"B=" + std::to_string(B) + " T=" + std::to_string(T) + " C=" + std::to_string(C) +
                       " V=" + std::to_string(V) + (accumulate ? " accumulate" : ""),
                   {},
                   {},
                   elements,
                   {}};
      k.entry = {.op = op, .B = B, .C = C, .OC = V};
      k.entry.T = T;
      k.entry.accumulate = accumulate;
      k.fill = [V](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
        if (b == "tokens")
          for (auto& x : v) x = double(rng.next_u32() % uint32_t(V));
      };
      out.push_back(k);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("embedding_forward") { check_parity(Op::embedding_forward, embedding_cases(Op::embedding_forward)); }

TEST_CASE("embedding_backward") { check_parity(Op::embedding_backward, embedding_cases(Op::embedding_backward)); }

TEST_CASE("residual_forward") {
  // N = rows x C: one element, a tail of 1..3 past the 4-wide groups, a transformer's (B*T, C) stream.
  std::vector<KernelCase> out;
  for (const auto& [rows, C] : std::vector<std::pair<long, long>>{{1, 1}, {3, 7}, {130, 64}}) {
    const size_t n = size_t(rows * C);
    KernelCase k{"rows=" + std::to_string(rows) + " C=" + std::to_string(C), {}, {}, {n, n, n}, {}};
    k.entry = {.op = Op::residual_forward, .B = rows, .OC = C};
    out.push_back(k);
  }
  check_parity(Op::residual_forward, out);
}

TEST_CASE("gather_tokens") {
  // B sequences of T tokens from a dataset of N, by an order that repeats and skips sequences, from position `first`;
  // targets -1 where they do not count.
  std::vector<KernelCase> out;
  for (const auto& [B, T, N, first] : std::vector<std::array<long, 4>>{{1, 1, 1, 0}, {3, 7, 5, 2}, {33, 20, 40, 4}}) {
    const size_t n = size_t(N) * size_t(T), bt = size_t(B) * size_t(T);
    KernelCase k{"B=" + std::to_string(B) + " T=" + std::to_string(T) + " N=" + std::to_string(N), {}, {},
                 {bt, bt, n, n, size_t(first + B)}, {}};
    k.entry = {.op = Op::gather_tokens, .B = B};
    k.entry.T = T;
    k.step.first = uint32_t(first);
    const uint32_t sequences = uint32_t(N);
    k.fill = [sequences](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
      if (b == "x")
        for (auto& x : v) x = double(rng.next_u32() % 106);
      if (b == "y")
        for (auto& x : v) x = double(int(rng.next_u32() % 107) - 1);  // -1: does not count
      if (b == "order")
        for (auto& x : v) x = double(rng.next_u32() % sequences);
    };
    out.push_back(k);
  }
  check_parity(Op::gather_tokens, out);
}

TEST_CASE("split_k_reduce") {
  // Outputs x slices: one slice (a copy, rounded once), the odd counts of the GEMMs' small outputs, and enough outputs
  // for the CPU twin's threads and the GPU's capped grid-stride loop. The partials are fp32 sums of many products:
  // uniform in [-1, 1] each, so that their sum cancels as a split dweight's does.
  std::vector<KernelCase> cases;
  for (const auto& [N, S] : std::vector<std::pair<size_t, uint32_t>>{{1, 1}, {7, 3}, {130, 2}, {70001, 5}}) {
    KernelCase c{"N=" + std::to_string(N) + " slices=" + std::to_string(S), {}, {}, {N, N * S}, {}};
    c.entry.N = N;
    c.entry.split_k = S;
    cases.push_back(c);
  }
  check_parity(Op::split_k_reduce, cases);
}
