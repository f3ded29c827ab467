// The tensor layout (see tensor_layout.hpp): the list, and every role resolved to its tensor in one place.
#include "core/tensor_layout.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/step_plan.hpp"

namespace core {

TensorLayout tensor_layout(const StepPlan& plan, const LayoutSizes& sizes, Precision precision) {
  using M = MemoryUsage;
  const ModelShape& shape = plan.shape;
  // A transformer's rows are its sequences' positions: B x T of them in a batch, T per sample of the dataset.
  const size_t T = static_cast<size_t>(shape.positions);
  const size_t B = static_cast<size_t>(plan.batch) * T, P = shape.param_count;
  const size_t C0 = static_cast<size_t>(shape.inputs());
  const bool tokens = shape.is_transformer();
  const bool sixteen = precision != Precision::FP32, scaling = precision == Precision::FP16;
  TensorLayout t;
  t.precision = precision;
  t.shape_ = shape;
  auto add = [&](std::string name, Role role, int layer, bool evaluation, size_t elements, Elem elem,
                 size_t M::*category, bool host_read = false) {
    t.tensors.push_back({std::move(name), role, layer, evaluation, elements, elem, category, host_read});
  };
  // The dataset as gather_batch reads it, and the sample orders.
  add("x_train", Role::DataX, -1, false, sizes.train * T * C0, Elem::F32, &M::dataset);
  add("y_train", Role::DataY, -1, false, sizes.train * T, Elem::I32, &M::dataset);
  add("x_test", Role::DataX, -1, true, sizes.test * T * C0, Elem::F32, &M::dataset);
  add("y_test", Role::DataY, -1, true, sizes.test * T, Elem::I32, &M::dataset);
  add("order", Role::Order, -1, false, sizes.train, Elem::U32, &M::workspace);
  add("test_order", Role::Order, -1, true, sizes.test, Elem::U32, &M::workspace);
  // The parameters, their gradients and the optimizer's state (ModelShape layout).
  add("params", Role::Params, -1, false, P, Elem::F32, sixteen ? &M::master_weights : &M::weights);
  if (sixteen) add("weights16", Role::Weights16, -1, false, P, Elem::Storage, &M::weights);
  add("grads", Role::Grads, -1, false, P, Elem::Storage, &M::gradients);
  const bool adamw = plan.optimizer == Optimizer::AdamW;
  add(adamw ? "adamw_m" : "momentum", Role::State1, -1, false, P, Elem::F32, &M::optimizer_state);
  if (adamw) add("adamw_v", Role::State2, -1, false, P, Elem::F32, &M::optimizer_state);
  // The batch, its per-sample results and the layers' activations and gradients.
  if (tokens) add("tokens", Role::Tokens, -1, false, B, Elem::I32, &M::activations);
  else add("x_batch", Role::XBatch, -1, false, B * C0, Elem::Storage, &M::activations);
  add("y_batch", Role::YBatch, -1, false, B, Elem::I32, &M::activations);
  add("losses", Role::Losses, -1, false, B, Elem::F32, &M::activations);
  add("batch_correct", Role::Correct, -1, false, B, Elem::I32, &M::activations);
  for (int l = 0; l < shape.layers(); ++l) {
    const size_t n = B * static_cast<size_t>(shape.fan_out(l));
    const std::string L = " L" + std::to_string(l + 1);
    if (shape.has_activation(l)) add("preact" + L, Role::Preact, l, false, n, Elem::Storage, &M::activations);
    add("act" + L, Role::Act, l, false, n, Elem::Storage, &M::activations);
    // Where the gradient is another layer's (a transformer's residual stream), that layer's tensor holds it.
    if (shape.grad[static_cast<size_t>(l)] == l) add("dact" + L, Role::DAct, l, false, n, Elem::Storage, &M::activations);
    const LayerKind kind = shape.kind(l);
    if (kind == LayerKind::Norm) {  // each row's mean and 1 / standard deviation, kept for the backward
      add("norm_mean" + L, Role::NormMean, l, false, B, Elem::F32, &M::activations);
      add("norm_rstd" + L, Role::NormRstd, l, false, B, Elem::F32, &M::activations);
    }
    if (kind == LayerKind::Attention) {  // each query row's log-sum-exp (kept), and the backward's dy . y
      const size_t rows = B * static_cast<size_t>(shape.heads);
      add("attn_lse" + L, Role::AttnLse, l, false, rows, Elem::F32, &M::activations);
      add("attn_delta" + L, Role::AttnDelta, l, false, rows, Elem::F32, &M::activations);
      // --attention naive: the (T, T) scores of every head of the batch, in memory (their probabilities, the
      // scores' gradient in the backward): what grows with T squared
      if (plan.naive_attention)
        add("attn_scores" + L, Role::AttnScores, l, false, rows * static_cast<size_t>(shape.positions),
            Elem::Storage, &M::attention_scores);
    }
  }
  // Read-back rings, evaluation outputs, the placeholder, split-K's partials, fp16's loss scaler.
  add("loss_history", Role::LossHistory, -1, false, sizes.readback, Elem::F32, &M::workspace, true);
  add("eval_losses", Role::Losses, -1, true, sizes.test * T, Elem::F32, &M::workspace);
  add("eval_correct", Role::Correct, -1, true, sizes.test * T, Elem::I32, &M::workspace);
  add("predictions", Role::Predictions, -1, false, B, Elem::I32, &M::workspace);
  add("placeholder", Role::Placeholder, -1, false, 4, Elem::F32, &M::workspace);
  size_t partials = 0;  // one buffer serves every split entry: they run one after the other
  for (const PlanEntry& e : plan.entries)
    if (e.split_k > 1) partials = std::max(partials, size_t(e.split_k) * split_output_elements(e));
  if (partials > 0) add("split_k_partials", Role::SplitKPartials, -1, false, partials, Elem::F32, &M::workspace);
  if (sizes.staging > 0) {
    add("staging_x", Role::StagingX, -1, false, sizes.staging * B * C0, Elem::Storage, &M::workspace);
    add("staging_y", Role::StagingY, -1, false, sizes.staging * B, Elem::I32, &M::workspace);
    t.tensors[t.tensors.size() - 2].host_write = t.tensors.back().host_write = true;
  }
  if (scaling) {
    add("loss_scaler", Role::Scaler, -1, false, 1, Elem::LossScaler, &M::workspace);
    add("scale_history", Role::ScaleHistory, -1, false, sizes.readback, Elem::ScaleHistory, &M::workspace, true);
  }
  return t;
}

int TensorLayout::find(Role role, int layer, bool evaluation) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDesc& t = tensors[i];
    if (t.role == role && t.layer == layer && t.evaluation == evaluation) return static_cast<int>(i);
  }
  return -1;
}

size_t TensorLayout::bytes(size_t i) const {
  const TensorDesc& t = tensors.at(i);
  return std::max<size_t>(16, t.elements * elem_bytes(t.elem, precision));
}

MemoryUsage TensorLayout::usage(bool with_dataset) const {
  MemoryUsage m;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (with_dataset || tensors[i].category != &MemoryUsage::dataset) m.*(tensors[i].category) += bytes(i);
  return m;
}

TensorView TensorLayout::whole(int i) const {
  if (i < 0) throw Error(ErrorKind::Internal, "tensor layout: a tensor it should hold is missing");
  return {i, 0, tensors[static_cast<size_t>(i)].elements};
}

// A layer's weight or bias within the flat parameters the kernels read (the 16-bit copy in 16-bit storage) or
// within the gradients.
TensorView TensorLayout::params_view(Role role, int l) const {
  const bool grad = role == Role::DWeight || role == Role::DBias;
  const int i = find(grad ? Role::Grads : precision == Precision::FP32 ? Role::Params : Role::Weights16);
  const bool weight = role == Role::Weight || role == Role::DWeight;
  return weight ? TensorView{i, shape_.weight_offset[l], shape_.weight_count(l)}
                : TensorView{i, shape_.bias_offset[l], shape_.bias_count(l)};
}

TensorView TensorLayout::resolve(Role role, int l, bool evaluation) const {
  const int L = shape_.layers();
  const bool per_layer = role == Role::LayerIn || role == Role::Act || role == Role::Preact || role == Role::DAct ||
                         role == Role::DPreact || role == Role::DLayerIn || role == Role::Weight ||
                         role == Role::Bias || role == Role::DWeight || role == Role::DBias || role == Role::Skip ||
                         role == Role::NormMean || role == Role::NormRstd || role == Role::AttnLse ||
                         role == Role::AttnDelta || role == Role::AttnScores;
  if (per_layer && (l < 0 || l >= L || (role == Role::DLayerIn && shape_.input[size_t(l)] < 0)))
    throw Error(ErrorKind::Internal, std::string("tensor layout: no layer ") + std::to_string(l) + " for role " +
                                         to_string(role));
  switch (role) {
    case Role::DataX:
    case Role::DataY:
    case Role::Order:
    case Role::Losses:
    case Role::Correct: return whole(find(role, -1, evaluation));
    case Role::LayerIn: {
      const int in = shape_.input.at(size_t(l));
      return in < 0 ? whole(find(Role::XBatch)) : whole(find(Role::Act, in));
    }
    case Role::Skip: return whole(find(Role::Act, shape_.skip.at(size_t(l))));
    case Role::Act: return whole(find(role, l));
    case Role::Preact:  // the logits layer has no activation: matmul_forward binds the placeholder, and leaves it
      return whole(shape_.has_activation(l) ? find(role, l) : find(Role::Placeholder));
    case Role::DAct:
    case Role::DPreact: return whole(find(Role::DAct, shape_.grad.at(size_t(l))));  // act_backward runs in place
    case Role::DLayerIn: return whole(find(Role::DAct, shape_.grad.at(size_t(shape_.input.at(size_t(l))))));
    case Role::NormMean:
    case Role::NormRstd:
    case Role::AttnLse:
    case Role::AttnDelta:
    case Role::AttnScores: return whole(find(role, l));
    case Role::TokenEmb: return params_view(Role::Weight, 0);  // the embedding layer's weight and "bias"
    case Role::PosEmb: return params_view(Role::Bias, 0);
    case Role::DTokenEmb: return params_view(Role::DWeight, 0);
    case Role::DPosEmb: return params_view(Role::DBias, 0);
    case Role::Logits: return whole(find(Role::Act, L - 1));
    case Role::DLogits: return whole(find(Role::DAct, L - 1));
    case Role::Weight:
    case Role::Bias:
    case Role::DWeight:
    case Role::DBias: return params_view(role, l);
    default: break;
  }
  const int i = find(role);
  if (i < 0)
    throw Error(ErrorKind::Internal, std::string("tensor layout: no tensor for role ") + to_string(role) + " in " +
                                         core::to_string(precision));
  return whole(i);
}

}  // namespace core
