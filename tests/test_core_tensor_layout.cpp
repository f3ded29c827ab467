// core::TensorLayout: every binding of every kernel of a step (and of the evaluation) resolves to a tensor of its
// element type that holds at least the elements the kernel table says the binding touches; the in-place and shared
// tensors are the same tensor; the memory figures are the sizes worked out here from the model's shape.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

#include "core/kernel_table.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"

using core::Op;
using core::Optimizer;
using core::Precision;
using core::Role;

namespace {

constexpr size_t kF = 4;
const core::ModelShape kShape({784, 256, 128, 10});
const core::LayoutSizes kSizes{60000, 10000, 10};

// Every binding of `e` against the layout, with the step's settings `s`.
void check_entry(const core::TensorLayout& layout, const core::PlanEntry& e, const core::StepArgs& s) {
  const core::KernelDef& def = core::kernel_def(e.op);
  for (const core::BindingDef& b : def.bindings) {
    if (!core::present(b.when, layout.precision)) continue;
    INFO(e.label() << " binding " << std::string(b.name) << std::string(s.evaluation ? " (evaluation)" : ""));
    const core::TensorView v = layout.resolve(b.role, e.layer, s.evaluation);
    REQUIRE(v.tensor >= 0);
    const core::TensorDesc& t = layout.tensors[static_cast<size_t>(v.tensor)];
    CHECK(v.offset + v.elements <= t.elements);
    if (t.role == Role::Placeholder) {  // bound, not touched
      CHECK(b.elements(e, s) == 0);
      continue;
    }
    // The binding's type; in fp32 a Storage binding may take the fp32 parameters (they are the weights read).
    CHECK((t.elem == b.elem ||
           (layout.precision == Precision::FP32 && b.elem == core::Elem::Storage && t.elem == core::Elem::F32)));
    if (b.elements) CHECK(b.elements(e, s) <= v.elements);
  }
}

}  // namespace

TEST_CASE("every binding of every plan entry resolves to a tensor of its type that holds what the kernel touches") {
  for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16})
    for (Optimizer opt : {Optimizer::AdamW, Optimizer::SGD})
      for (bool unfused : {false, true}) {
        CAPTURE(std::string(core::to_string(p)));
        CAPTURE(unfused);
        const core::StepPlan plan = core::build_step_plan(kShape, 128, core::Activation::GELU, opt, p, unfused);
        const core::TensorLayout layout = core::tensor_layout(plan, kSizes);
        for (const core::PlanEntry& e : plan.entries) check_entry(layout, e, {});
        core::StepArgs evaluation;
        evaluation.evaluation = true;
        check_entry(layout, {.op = Op::gather_batch, .B = 128, .C = 784}, evaluation);
        for (const core::PlanEntry& e : plan.entries)
          if (e.layer_forward()) check_entry(layout, e, evaluation);
        check_entry(layout, {.op = Op::softmax_xent_forward_backward, .B = 128, .C = 10}, evaluation);
      }
}

TEST_CASE("the CNN: every binding resolves, convolutions keep a pre-activation and pools none, params as laid out") {
  // conv 32 -> pool -> conv 64 -> pool -> 128 -> 10 on 28x28 images, and an odd one (7x9: pools drop a row/column)
  for (const core::ModelShape& shape :
       {core::ModelShape::cnn({1, 28, 28}, {32, 64}, {128}, 10), core::ModelShape::cnn({1, 7, 9}, {3, 5}, {9}, 5)}) {
    CAPTURE(shape.describe());
    REQUIRE(shape.layers() == 6);
    for (Precision p : {Precision::FP32, Precision::BF16})
      for (bool unfused : {false, true}) {
        CAPTURE(unfused);
        const core::StepPlan plan = core::build_step_plan(shape, 33, core::Activation::ReLU, Optimizer::AdamW, p,
                                                          unfused);
        const core::TensorLayout layout = core::tensor_layout(plan, kSizes);
        for (const core::PlanEntry& e : plan.entries) check_entry(layout, e, {});
        core::StepArgs evaluation;
        evaluation.evaluation = true;
        for (const core::PlanEntry& e : core::forward_pass(plan, 7, core::Pass::Evaluation))
          check_entry(layout, e, evaluation);
        for (int l = 0; l < shape.layers(); ++l) {
          CAPTURE(l);
          CHECK((layout.find(Role::Preact, l) >= 0) == (l == 0 || l == 2 || l == 4));  // conv, conv, dense 128
          CHECK(layout.tensors[size_t(layout.find(Role::Act, l))].elements == size_t(33 * shape.fan_out(l)));
        }
      }
    // Weights (OC,3,3,C) and one bias per channel; no parameters in the pools.
    CHECK(shape.weight_count(0) == size_t(shape.images[1].c * 9 * shape.images[0].c));
    CHECK(shape.weight_count(1) == 0);
    CHECK(shape.bias_count(3) == 0);
    CHECK(shape.weight_count(4) == size_t(shape.fan_in(4)) * size_t(shape.fan_out(4)));
  }
  const core::ModelShape cnn = core::ModelShape::cnn({1, 28, 28}, {32, 64}, {128}, 10);
  CHECK(cnn.describe() == "28x28x1-conv32-pool-conv64-pool-128-10");
  CHECK(cnn.fan_in(4) == 7 * 7 * 64);
  CHECK(cnn.real_param_count == 32 * 9 + 32 + 64 * 9 * 32 + 64 + 3136 * 128 + 128 + 128 * 10 + 10);
  CHECK(cnn.hidden() == std::vector<int>{128});
  CHECK(cnn.conv_channels() == std::vector<int>{32, 64});
  CHECK_THROWS_WITH_AS(core::ModelShape::cnn({1, 5, 5}, {4, 4, 4}, {}, 10),
                       "--conv: 3 convolutions would pool the 5x5 images below 1x1 (each pool halves them); use at "
                       "most 2",
                       core::Error);
  // Images 1 pixel high take no convolution at all (issue 34: "use at most 0").
  CHECK_THROWS_WITH_AS(core::ModelShape::cnn({1, 1, 64}, {4}, {}, 10),
                       "--model cnn: the 1x64 images are too small for any convolution (each is followed by a 2x2 max "
                       "pool, which needs at least 2x2 pixels); use --model mlp",
                       core::Error);
}

TEST_CASE("one tensor where the step shares one: in-place gradients, a layer's input is the previous output") {
  const core::StepPlan plan = core::build_step_plan(kShape, 128, core::Activation::ReLU, Optimizer::AdamW);
  const core::TensorLayout t = core::tensor_layout(plan, kSizes);
  for (int l = 0; l < 3; ++l) {
    CAPTURE(l);
    CHECK(t.resolve(Role::DAct, l, false).tensor == t.resolve(Role::DPreact, l, false).tensor);  // act_backward
    if (l > 0) CHECK(t.resolve(Role::LayerIn, l, false).tensor == t.resolve(Role::Act, l - 1, false).tensor);
    if (l > 0) CHECK(t.resolve(Role::DLayerIn, l, false).tensor == t.resolve(Role::DAct, l - 1, false).tensor);
    const core::TensorView w = t.resolve(Role::Weight, l, false), dw = t.resolve(Role::DWeight, l, false);
    CHECK(w.tensor == t.find(Role::Params));  // fp32: the masters are the weights the kernels read
    CHECK(dw.tensor == t.find(Role::Grads));
    CHECK(w.offset == kShape.weight_offset[l]);
    CHECK(w.elements == size_t(kShape.fan_in(l)) * size_t(kShape.fan_out(l)));
  }
  CHECK(t.resolve(Role::Logits, -1, false).tensor == t.resolve(Role::Act, 2, false).tensor);
  CHECK(t.resolve(Role::DLogits, -1, false).tensor == t.resolve(Role::DAct, 2, false).tensor);
  CHECK(t.resolve(Role::Preact, 2, false).tensor == t.find(Role::Placeholder));  // the logits layer has none
  CHECK(t.resolve(Role::DataX, -1, true).tensor != t.resolve(Role::DataX, -1, false).tensor);
  CHECK(t.resolve(Role::Losses, -1, true).elements == 10000);  // evaluation fills one test-set array
  CHECK_THROWS(t.resolve(Role::Scaler, -1, false));             // fp32 has no loss scaler
  const core::TensorLayout half = core::tensor_layout(plan, kSizes, Precision::BF16);
  CHECK(half.resolve(Role::Weight, 1, false).tensor == half.find(Role::Weights16));  // the 16-bit copy
}

TEST_CASE("memory from the layout: the default model 784-256-128-10, batch 128, on Fashion-MNIST's sizes") {
  const core::StepPlan plan = core::build_step_plan(kShape, 128, core::Activation::ReLU, Optimizer::AdamW);
  const core::MemoryUsage m = core::tensor_layout(plan, kSizes).usage(true);
  // 784x256 + 256 + 256x128 + 128 + 128x10 + 10 (each rounded up to a multiple of 128) = 235,264 floats
  CHECK(kShape.param_count == 235264);
  CHECK(m.weights == 941056);
  CHECK(m.master_weights == 0);
  CHECK(m.gradients == 941056);
  CHECK(m.optimizer_state == 2 * 941056);
  // 128 x (784 + 3) (x_batch; labels, losses, flags) + 128 x (3 x 256 + 3 x 128 + 2 x 10) floats
  CHECK(m.activations == 128 * (787 + 768 + 384 + 20) * kF);
  // orders (60000 + 10000), loss history 10, evaluation losses and flags 2 x 10000, prediction's classes 128, the
  // 16-byte placeholder
  CHECK(m.workspace == (60000 + 3 * 10000 + 10 + 128) * kF + 16);
  CHECK(m.dataset == 70000 * 785 * kF);
  CHECK(core::tensor_layout(plan, kSizes).usage(false).dataset == 0);

  const core::StepPlan sgd = core::build_step_plan(kShape, 256, core::Activation::ReLU, Optimizer::SGD);
  const core::MemoryUsage s = core::tensor_layout(sgd, kSizes).usage(true);
  CHECK(s.optimizer_state == 941056);  // the momentum buffer alone
  CHECK(s.activations == 2 * m.activations);

  // fp16: 16-bit tensors, the fp32 masters beside the weights copy, the loss scaler (32 bytes) and its history
  // (8 bytes a slot).
  const core::StepPlan fp16 =
      core::build_step_plan(kShape, 128, core::Activation::ReLU, Optimizer::AdamW, Precision::FP16);
  const core::MemoryUsage h = core::tensor_layout(fp16, kSizes).usage(true);
  CHECK(h.weights == 235264 * 2);
  CHECK(h.master_weights == 941056);
  CHECK(h.gradients == 235264 * 2);
  CHECK(h.activations == 128 * 3 * kF + 128 * (784 + 768 + 384 + 20) * 2);
  CHECK(h.workspace == m.workspace + 32 + 10 * 8);
  // The same model in fp32: the fp32 layout of the same plan.
  CHECK(core::tensor_layout(fp16, kSizes, Precision::FP32).usage(true) == m);
}

TEST_CASE("naive attention: its scores are a tensor of their own, and its kernels move them") {
  // 2 blocks, context 16, 2 heads, batch 8: per attention layer 8 x 2 x 16 x 16 scores.
  const core::ModelShape shape = core::ModelShape::transformer(
      {.vocab = 11, .context = 16, .embed = 8, .heads = 2, .layers = 2, .tied = true, .counted = 8});
  const size_t scores = 8 * 2 * 16 * 16;
  for (const core::Precision p : {core::Precision::FP32, core::Precision::BF16}) {
    CAPTURE(core::to_string(p));
    const core::StepPlan fused =
        core::build_step_plan(shape, 8, core::Activation::GELU, core::Optimizer::AdamW, p, false, false);
    const core::StepPlan naive =
        core::build_step_plan(shape, 8, core::Activation::GELU, core::Optimizer::AdamW, p, false, true);
    const core::LayoutSizes sizes{100, 10, 1};
    CHECK(core::tensor_layout(fused, sizes, p).usage(false).attention_scores == 0);
    CHECK(core::tensor_layout(naive, sizes, p).usage(false).attention_scores ==
          2 * scores * core::storage_bytes(p));
    // The same figures from either plan; naive moves the matrix at least once per kernel (7 kernels, some twice).
    const core::AttentionTraffic a = core::attention_traffic(fused), b = core::attention_traffic(naive);
    CHECK(a.fused == b.fused);
    CHECK(a.naive == b.naive);
    CHECK(a.fused > 0);
    CHECK(a.naive - a.fused >= 2.0 * 7 * double(scores * core::storage_bytes(p)));
  }
  // A model without attention has none.
  const core::StepPlan mlp = core::build_step_plan(core::ModelShape({4, 8, 3}), 8, core::Activation::ReLU,
                                                   core::Optimizer::AdamW, core::Precision::FP32, false, true);
  CHECK(core::attention_traffic(mlp).naive == 0);
  CHECK_FALSE(mlp.naive_attention);
}
