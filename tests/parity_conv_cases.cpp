// The kernel parity test's cases of the convolutional layers' kernels (conv2d_forward, conv2d_backward_data,
// conv2d_backward_weight, max_pool_forward, max_pool_backward), beside tests/test_kernel_parity.cpp and run by the same
// machinery (parity.cpp): on the GPU and the tuned CPU twin against each kernel's plain reference in double, every
// precision. Odd shapes on purpose: images of odd and unequal height and width, 1 and 3 input channels, kernels of
// 1, 3 and 5 with and without padding, and one shape large enough that the CPU twins use several panels (and
// backward weight several partial products) over their threads.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parity.hpp"

using core::Op;
using test::check_parity;
using test::KernelCase;
using test::uniform;

namespace {

struct ConvShape {
  long B, H, W, C, OC, KS, pad;
  bool sixteen_bit = false;  // the GPU runs it in fp16 and bf16 too
};
const std::vector<ConvShape>& conv_shapes() {
  static const std::vector<ConvShape> shapes = {
      {1, 5, 5, 1, 3, 3, 1}, {2, 7, 6, 3, 5, 3, 1, true},   {3, 6, 7, 4, 8, 3, 0},   {1, 6, 5, 2, 3, 5, 2},
      {2, 4, 3, 5, 6, 1, 0}, {2, 9, 9, 16, 32, 3, 1, true}, {5, 15, 13, 8, 17, 3, 1},
      {3, 20, 19, 3, 7, 3, 1}, {4, 19, 17, 1, 32, 3, 1}};
  return shapes;
}

std::string conv_label(const ConvShape& s) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) +
         " C=" + std::to_string(s.C) + " OC=" + std::to_string(s.OC) + " KS=" + std::to_string(s.KS) +
         " pad=" + std::to_string(s.pad);
}

core::PlanEntry conv_entry(Op op, const ConvShape& s) {
  core::PlanEntry e{.op = op, .B = s.B, .C = s.C, .OC = s.OC};
  e.H = s.H;
  e.W = s.W;
  e.KS = int(s.KS);
  e.pad = int(s.pad);
  return e;
}

std::vector<KernelCase> conv_backward_cases(Op op) {
  std::vector<KernelCase> out;
  for (const ConvShape& s : conv_shapes()) {
    const core::PlanEntry e = conv_entry(op, s);
    const size_t in = size_t(s.B * s.H * s.W * s.C), o = size_t(s.B * e.OH() * e.OW() * s.OC),
                 w = size_t(s.OC * s.KS * s.KS * s.C);
    KernelCase c{conv_label(s),
                 e,
                 {},
                 op == Op::conv2d_backward_data ? std::vector<size_t>{in, o, w} : std::vector<size_t>{w, o, in},
                 {}};
    if (!s.sixteen_bit) c.gpu = KernelCase::Gpu::Fp32;
    out.push_back(c);
  }
  return out;
}

// Pooling: (B, H, W, C); odd heights and widths drop their last row or column.
struct PoolShape {
  long B, H, W, C;
  bool ties;  // values from {-1, 0, 1}: most windows hold their maximum twice or more (the first one wins)
};
const PoolShape kPoolShapes[] = {
    {1, 2, 2, 1, false}, {2, 5, 7, 3, false}, {3, 8, 6, 16, true}, {2, 7, 9, 5, true}, {4, 28, 28, 8, false}};

std::vector<KernelCase> pool_cases(Op op) {
  std::vector<KernelCase> out;
  for (const PoolShape& s : kPoolShapes) {
    core::PlanEntry e{.op = op, .B = s.B, .C = s.C, .OC = s.C};
    e.H = s.H;
    e.W = s.W;
    const size_t in = size_t(s.B * s.H * s.W * s.C), o = size_t(s.B * e.OH() * e.OW() * s.C);
    KernelCase c{"B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) + " W=" + std::to_string(s.W) +
                     " C=" + std::to_string(s.C) + (s.ties ? " ties" : ""),
                 e,
                 {},
                 op == Op::max_pool_forward ? std::vector<size_t>{o, in} : std::vector<size_t>{in, o, in},
                 {}};
    if (s.ties)
      c.fill = [](const std::string& b, std::vector<double>& v, core::Pcg32& rng, core::Precision) {
        if (b == "inp")
          for (auto& x : v) x = double(rng.next_u32() % 3) - 1.0;
      };
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("conv2d_forward") {
  std::vector<KernelCase> out;
  for (const ConvShape& s : conv_shapes())
    for (int mode = 0; mode < 5; ++mode) {
      // linear (no activation: the logits), then each activation, then --unfused (no epilogue: the plain sums)
      const bool act = mode >= 1 && mode <= 3;
      const core::Activation activation = act ? core::kActivations[mode - 1] : core::Activation::ReLU;
      const std::string name = mode == 0 ? " linear" : mode == 4 ? " unfused" : std::string(" ") + core::to_string(activation);
      core::PlanEntry e = conv_entry(Op::conv2d_forward, s);
      e.activation = act;
      e.epilogue = mode < 4;
      const size_t o = size_t(s.B * e.OH() * e.OW() * s.OC);
      KernelCase c{conv_label(s) + name,
                   e,
                   {},
                   {o, o, size_t(s.B * s.H * s.W * s.C), size_t(s.OC * s.KS * s.KS * s.C), size_t(s.OC)},
                   {}};
      c.step.activation = activation;
      // The epilogue is matmul_forward's, one piece of code after every tiling: ReLU on every GPU variant, the other
      // modes on the default one in fp32.
      c.gpu = mode != 1       ? KernelCase::Gpu::DefaultFp32
              : s.sixteen_bit ? KernelCase::Gpu::EveryVariant
                              : KernelCase::Gpu::Fp32;
      out.push_back(c);
    }
  check_parity(Op::conv2d_forward, out);
}

TEST_CASE("conv2d_backward_data") {
  check_parity(Op::conv2d_backward_data, conv_backward_cases(Op::conv2d_backward_data));
}

TEST_CASE("conv2d_backward_weight") {
  check_parity(Op::conv2d_backward_weight, conv_backward_cases(Op::conv2d_backward_weight));
}

TEST_CASE("max_pool_forward") { check_parity(Op::max_pool_forward, pool_cases(Op::max_pool_forward)); }

TEST_CASE("max_pool_backward") { check_parity(Op::max_pool_backward, pool_cases(Op::max_pool_backward)); }
