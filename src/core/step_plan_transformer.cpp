// The step plan of a transformer (ModelShape::transformer): its kernels in order, as build_step_plan lays out an MLP's.
// Row-wise kernels run over the B x T positions of the batch's B sequences (their entry's B; `pixels` = T, so that
// evaluation's partial batch scales them as it scales a CNN's per-pixel kernels); embedding and attention over the B
// sequences (their entry's B, with T).
#include <string_view>

#include "core/error.hpp"
#include "core/step_plan.hpp"

namespace core {
namespace {

// An attention kernel's entry: layer l over B sequences.
PlanEntry attention_entry(const ModelShape& s, Op op, int l, long B) {
  PlanEntry e{.op = op, .layer = l, .B = B, .C = s.fan_out(l)};
  e.T = s.positions;
  e.heads = s.heads;
  return e;
}

// The forward kernel of layer l over `B` sequences (an attention layer's: attention_forward_fused).
PlanEntry forward_entry(const ModelShape& s, int l, long B) {
  const long T = s.positions, R = B * T, C = s.fan_in(l), OC = s.fan_out(l);
  PlanEntry e{.op = Op::matmul_forward, .layer = l, .B = R, .C = C, .OC = OC, .pixels = T};  // op set below
  switch (s.kind(l)) {
    case LayerKind::Embedding:
      e = {.op = Op::embedding_forward, .layer = l, .B = B, .C = OC, .OC = s.classes()};
      e.T = T;
      return e;
    case LayerKind::Norm: e.op = Op::layernorm_forward; return e;
    case LayerKind::Dense:
      e.op = Op::matmul_forward;
      e.activation = s.has_activation(l);
      e.epilogue = s.bias_count(l) > 0;  // the output projection has no bias: the plain GEMM
      return e;
    case LayerKind::Attention: return attention_entry(s, Op::attention_forward_fused, l, B);
    case LayerKind::Residual: e.op = Op::residual_forward; return e;
    case LayerKind::Conv:
    case LayerKind::Pool: break;
  }
  throw Error(ErrorKind::Internal, "transformer plan: a layer of a kind a transformer does not have");
}

}  // namespace

// The forward pass of B sequences: gather_tokens, then each layer's kernel (naive attention: its three).
std::vector<PlanEntry> transformer_forward(const ModelShape& s, long B, bool naive_attention) {
  std::vector<PlanEntry> out;
  PlanEntry gather{.op = Op::gather_tokens, .B = B};
  gather.T = s.positions;
  out.push_back(gather);
  for (int l = 0; l < s.layers(); ++l) {
    if (naive_attention && s.kind(l) == LayerKind::Attention) {
      for (Op op : {Op::attention_naive_scores, Op::attention_naive_softmax, Op::attention_naive_values})
        out.push_back(attention_entry(s, op, l, B));
      continue;
    }
    out.push_back(forward_entry(s, l, B));
  }
  return out;
}

void add_transformer_steps(StepPlan& plan, const std::function<void(PlanEntry)>& add) {
  const ModelShape& s = plan.shape;
  const long B = plan.batch, T = s.positions, R = B * T, L = s.layers();
  for (const PlanEntry& e : transformer_forward(s, B, plan.naive_attention)) add(e);
  // The cross-entropy of every position's next token; its mean over the positions that count.
  const size_t counted = static_cast<size_t>(B) * static_cast<size_t>(s.counted);
  add({.op = Op::softmax_xent_forward_backward, .B = R, .C = s.classes(), .N = counted, .pixels = T});
  add({.op = Op::loss_reduce, .B = R, .N = counted, .pixels = T});
  bool stream_written = false;  // the residual stream's gradient: the final LayerNorm's backward writes it first
  for (int l = static_cast<int>(L) - 1; l >= 1; --l) {
    const long C = s.fan_in(l), OC = s.fan_out(l);
    switch (s.kind(l)) {
      case LayerKind::Dense:
        if (s.has_activation(l))
          add({.op = Op::act_backward, .layer = l, .B = R, .OC = OC, .N = size_t(R * OC), .pixels = T});
        add({.op = Op::matmul_backward_weight, .layer = l, .B = R, .C = C, .OC = OC, .pixels = T});
        if (s.bias_count(l) > 0) add({.op = Op::bias_backward, .layer = l, .B = R, .OC = OC, .pixels = T});
        add({.op = Op::matmul_backward_data, .layer = l, .B = R, .C = C, .OC = OC, .pixels = T});
        break;
      case LayerKind::Norm: {
        add({.op = Op::layernorm_backward_params, .layer = l, .B = R, .C = C, .pixels = T});
        PlanEntry e{.op = Op::layernorm_backward, .layer = l, .B = R, .C = C, .pixels = T};
        e.accumulate = stream_written;  // the blocks' LayerNorms add their share to the stream's gradient
        stream_written = true;
        add(e);
        break;
      }
      case LayerKind::Attention:
        // naive: dv reads the probabilities before dscores overwrites them with the scores' gradient
        if (plan.naive_attention)
          for (Op op : {Op::attention_naive_dv, Op::attention_naive_dscores, Op::attention_naive_dq,
                        Op::attention_naive_dk})
            add(attention_entry(s, op, l, B));
        else
          for (Op op : {Op::attention_backward_dq, Op::attention_backward_dkv}) add(attention_entry(s, op, l, B));
        break;
      case LayerKind::Residual: break;  // its gradient is the stream's, unchanged, to both of its inputs
      case LayerKind::Embedding:
      case LayerKind::Conv:
      case LayerKind::Pool: throw Error(ErrorKind::Internal, "transformer plan: an unexpected layer");
    }
  }
  PlanEntry emb{.op = Op::embedding_backward, .layer = 0, .B = B, .C = s.embed(), .OC = s.classes()};
  emb.T = T;
  emb.accumulate = s.tied;  // the output projection's backward wrote the tied weight's gradient first
  add(emb);
}

AttentionTraffic attention_traffic(const StepPlan& plan) {
  if (!plan.shape.is_transformer()) return {};
  const StepPlan other = build_step_plan(plan.shape, plan.batch, plan.activation, plan.optimizer, plan.precision,
                                         plan.unfused, !plan.naive_attention);
  auto bytes = [](const StepPlan& p) {
    double sum = 0;
    for (const PlanEntry& e : p.entries)
      if (std::string_view(kernel_name(e.op)).starts_with("attention_")) sum += e.bytes();
    return sum;
  };
  return plan.naive_attention ? AttentionTraffic{bytes(other), bytes(plan)} : AttentionTraffic{bytes(plan), bytes(other)};
}

}  // namespace core
