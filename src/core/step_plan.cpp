// Building the StepPlan; each entry's analytic FLOP and byte counts come from its kernel's formulas in the kernel table.
// Counting conventions: a multiply-add is 2 FLOPs; bytes are the compulsory traffic (every tensor read or written
// once, as a perfect cache would), so achieved GB/s is a lower bound of the real traffic.
#include "core/step_plan.hpp"

#include <fmt/format.h>

#include "core/input.hpp"
#include "core/kernel_table.hpp"

namespace core {

const char* kernel_name(Op op) { return kernel_def(op).name; }

std::string PlanEntry::label() const {
  if (transfer()) return fmt::format("{} ({}x{} host to device, {:.0f} bytes)", kernel(), B, C, bytes_read);
  switch (op) {
    case Op::matmul_forward:
      return fmt::format("{} L{} ({}x{} -> {}x{})", kernel(), layer + 1, B, C, B, OC);
    case Op::matmul_backward_weight:
      if (split_k > 1)
        return fmt::format("{} L{} (dW {}x{}, split-K {} x {} rows + reduce)", kernel(), layer + 1, OC, C, split_k,
                           k_slice());
      return fmt::format("{} L{} (dW {}x{})", kernel(), layer + 1, OC, C);
    case Op::matmul_backward_data:
      return fmt::format("{} L{} (dinp {}x{})", kernel(), layer + 1, B, C);
    case Op::bias_backward:
      return fmt::format("{} L{} (db {})", kernel(), layer + 1, OC);
    case Op::bias_add:
      return fmt::format("{} L{} ({}x{} + {})", kernel(), layer + 1, B, OC, OC);
    case Op::act_forward:
    case Op::act_backward:
      return fmt::format("{} L{} ({} values)", kernel(), layer + 1, N);
    case Op::adamw_update:
    case Op::sgd_update:
    case Op::check_finite_grads:
      return fmt::format("{} ({} parameters)", kernel(), N);
    case Op::update_loss_scale:
      return kernel();
    case Op::conv2d_forward:
      return fmt::format("{} L{} ({}x{}x{}x{} -> {}x{}x{}x{}, {}x{})", kernel(), layer + 1, B, H, W, C, B, OH(), OW(),
                         OC, KS, KS);
    case Op::conv2d_backward_data:
      return fmt::format("{} L{} (dinp {}x{}x{}x{})", kernel(), layer + 1, B, H, W, C);
    case Op::conv2d_backward_weight:
      if (split_k > 1)
        return fmt::format("{} L{} (dW {}x{}x{}x{}, split-K {} x {} images + reduce)", kernel(), layer + 1, OC, KS, KS,
                           C, split_k, k_slice());
      return fmt::format("{} L{} (dW {}x{}x{}x{})", kernel(), layer + 1, OC, KS, KS, C);
    case Op::max_pool_forward:
      return fmt::format("{} L{} ({}x{}x{}x{} -> {}x{}x{}x{})", kernel(), layer + 1, B, H, W, C, B, OH(), OW(), C);
    case Op::max_pool_backward:
      return fmt::format("{} L{} (dinp {}x{}x{}x{})", kernel(), layer + 1, B, H, W, C);
    default:
      return fmt::format("{} ({}x{})", kernel(), B, C);
  }
}

namespace {
// The entry of an image kernel (convolution, pooling) of layer l: its input image and channels.
PlanEntry image_entry(Op op, const ModelShape& shape, int l, long B) {
  const Image in = shape.images[static_cast<size_t>(l)], out = shape.images[static_cast<size_t>(l) + 1];
  PlanEntry e{.op = op, .layer = l, .B = B, .C = in.c, .OC = out.c};
  e.H = in.h;
  e.W = in.w;
  if (shape.kind(l) == LayerKind::Conv) {
    e.KS = ModelShape::kConvKernel;
    e.pad = ModelShape::kConvPad;
  }
  return e;
}
// A per-pixel kernel of convolution `conv`'s output (bias_add, act_forward, act_backward, bias_backward): B counts
// pixel rows, and `pixels` says how many per sample (so that with_rows can rescale it).
PlanEntry pixel_entry(PlanEntry e, const PlanEntry& conv) {
  e.pixels = conv.OH() * conv.OW();
  return e;
}
// ceil(B / slices), rounded up to a multiple of kSplitKAlign.
long slice_rows(long B, uint32_t slices) {
  const long rows = (B + slices - 1) / slices;
  return (rows + kSplitKAlign - 1) / kSplitKAlign * kSplitKAlign;
}
}  // namespace

namespace {
// Rows of K per slice of a kernel that splits as `how`: whole images (ceil(B / slices)), or rows aligned to
// kSplitKAlign.
long rows_per_slice(SplitK how, long B, long slices) {
  return how == SplitK::Images ? (B + slices - 1) / slices : slice_rows(B, slices);
}
}  // namespace

long PlanEntry::k_slice() const {
  if (split_k <= 1) return B;
  return rows_per_slice(kernel_def(op).gemm.split_k, B, split_k);
}

void set_figures(PlanEntry& e, Precision precision) {
  const KernelDef& def = kernel_def(e.op);
  e.flops = def.flops(e, precision);
  e.bytes_read = def.bytes_read(e, precision);
  e.bytes_written = def.bytes_written(e, precision);
}

PlanEntry with_split_k(const PlanEntry& e, uint32_t slices, Precision precision) {
  const SplitK how = kernel_def(e.op).gemm.split_k;
  if (how == SplitK::None) return e;
  PlanEntry out = e;
  out.split_k = 1;
  if (slices > 1 && e.B > 0) {
    const long rows = rows_per_slice(how, e.B, slices);
    out.split_k = static_cast<uint32_t>((e.B + rows - 1) / rows);
  }
  set_figures(out, precision);
  return out;
}

size_t split_output_elements(const PlanEntry& e) { return kernel_def(e.op).bindings.at(0).elements(e, StepArgs{}); }

PlanEntry split_k_reduce_entry(const PlanEntry& e, Precision precision) {
  PlanEntry r{.op = Op::split_k_reduce, .layer = e.layer};
  r.N = split_output_elements(e);
  r.split_k = e.split_k;
  set_figures(r, precision);
  return r;
}

void use_host_upload(StepPlan& plan) {
  for (PlanEntry& e : plan.entries)
    if (e.op == Op::gather_batch) {
      e.kind = EntryKind::Transfer;
      e.flops = 0;
      e.bytes_read = static_cast<double>(batch_upload_bytes(e.B, e.C, plan.precision));
      e.bytes_written = 0;
    }
}

double StepPlan::total_flops() const {
  double s = 0;
  for (const auto& e : entries) s += e.flops;
  return s;
}

double StepPlan::total_bytes() const {
  double s = 0;
  for (const auto& e : entries) s += e.bytes();
  return s;
}

namespace {

// The optimizer's update over the flat parameters, and fp16's loss-scaling entries around it.
void add_update(const StepPlan& plan, const std::function<void(PlanEntry)>& add) {
  const size_t P = plan.shape.param_count;
  if (plan.loss_scaling()) add({.op = Op::check_finite_grads, .N = P});
  add({.op = plan.optimizer == Optimizer::AdamW ? Op::adamw_update : Op::sgd_update, .N = P});
  if (plan.loss_scaling()) add({.op = Op::update_loss_scale});
}

// A transformer's training step (core/step_plan_transformer.cpp) and its update.
StepPlan& transformer_step(StepPlan& plan, const std::function<void(PlanEntry)>& add) {
  add_transformer_steps(plan, add);
  add_update(plan, add);
  return plan;
}

}  // namespace

StepPlan build_step_plan(const ModelShape& shape, int batch, Activation act, Optimizer opt, Precision precision,
                         bool unfused, bool naive_attention) {
  StepPlan plan;
  plan.unfused = unfused;
  plan.naive_attention = naive_attention && shape.is_transformer();
  plan.precision = precision;
  plan.bytes_per_element = storage_bytes(precision);
  plan.shape = shape;
  plan.batch = batch;
  plan.activation = act;
  plan.optimizer = opt;
  const long B = batch;
  const int L = shape.layers();
  // Each entry's figures from its kernel's formulas (core/kernel_table.cpp).
  auto add = [&](PlanEntry e) {
    set_figures(e, precision);
    plan.entries.push_back(e);
  };
  if (shape.is_transformer()) return transformer_step(plan, add);

  // gather the batch's rows of the training set (kept on the device) into the layer-1 input
  add({.op = Op::gather_batch, .B = B, .C = shape.inputs()});
  for (int l = 0; l < L; ++l) {
    const bool hidden = l < L - 1;
    const long OC = shape.fan_out(l);
    if (shape.kind(l) == LayerKind::Pool) {
      add(image_entry(Op::max_pool_forward, shape, l, B));
      continue;
    }
    if (shape.kind(l) == LayerKind::Conv) {
      PlanEntry conv = image_entry(Op::conv2d_forward, shape, l, B);
      conv.activation = hidden;
      conv.epilogue = !unfused;
      add(conv);
      if (!unfused) continue;
      const long pixels = B * conv.OH() * conv.OW();
      add(pixel_entry({.op = Op::bias_add, .layer = l, .B = pixels, .OC = conv.OC}, conv));
      add(pixel_entry({.op = Op::act_forward, .layer = l, .B = pixels, .OC = conv.OC,
                       .N = static_cast<size_t>(pixels * conv.OC)},
                      conv));
      continue;
    }
    if (!unfused) {
      add({.op = Op::matmul_forward, .layer = l, .activation = hidden, .B = B, .C = shape.fan_in(l), .OC = OC});
      continue;
    }
    add({.op = Op::matmul_forward, .layer = l, .epilogue = false, .B = B, .C = shape.fan_in(l), .OC = OC});
    add({.op = Op::bias_add, .layer = l, .B = B, .OC = OC});
    if (hidden) add({.op = Op::act_forward, .layer = l, .B = B, .OC = OC, .N = static_cast<size_t>(B * OC)});
  }
  add({.op = Op::softmax_xent_forward_backward, .B = B, .C = shape.classes()});
  add({.op = Op::loss_reduce, .B = B});
  for (int l = L - 1; l >= 0; --l) {
    const long C = shape.fan_in(l), OC = shape.fan_out(l);
    if (shape.kind(l) == LayerKind::Pool) {  // never the first layer: a pool follows its convolution
      add(image_entry(Op::max_pool_backward, shape, l, B));
      continue;
    }
    if (shape.kind(l) == LayerKind::Conv) {
      const PlanEntry conv = image_entry(Op::conv2d_backward_weight, shape, l, B);
      const long pixels = B * conv.OH() * conv.OW();
      if (shape.has_activation(l))
        add(pixel_entry({.op = Op::act_backward, .layer = l, .B = pixels, .OC = conv.OC,
                         .N = static_cast<size_t>(pixels * conv.OC)},
                        conv));
      add(conv);
      add(pixel_entry({.op = Op::bias_backward, .layer = l, .B = pixels, .OC = conv.OC}, conv));
      if (l > 0) add(image_entry(Op::conv2d_backward_data, shape, l, B));
      continue;
    }
    if (l < L - 1) add({.op = Op::act_backward, .layer = l, .B = B, .OC = OC, .N = static_cast<size_t>(B * OC)});
    add({.op = Op::matmul_backward_weight, .layer = l, .B = B, .C = C, .OC = OC});
    add({.op = Op::bias_backward, .layer = l, .B = B, .OC = OC});
    if (l > 0) add({.op = Op::matmul_backward_data, .layer = l, .B = B, .C = C, .OC = OC});
  }
  add_update(plan, add);
  return plan;
}

std::vector<PlanEntry> forward_pass(const StepPlan& plan, long rows, Pass pass) {
  std::vector<PlanEntry> out;
  auto add = [&](PlanEntry e) {
    set_figures(e, plan.precision);
    out.push_back(e);
  };
  const long positions = rows * plan.shape.positions;  // a transformer's: every position of each sequence
  if (plan.shape.is_transformer()) {
    for (const PlanEntry& e : transformer_forward(plan.shape, rows, plan.naive_attention)) add(e);
  } else {
    add({.op = Op::gather_batch, .B = rows, .C = plan.shape.inputs()});
    for (const PlanEntry& e : plan.entries)
      if (e.layer_forward()) add(e.with_rows(rows));
  }
  if (pass == Pass::Evaluation)
    add({.op = Op::softmax_xent_forward_backward, .B = positions, .C = plan.shape.classes()});
  if (pass == Pass::Prediction) add({.op = Op::argmax, .B = positions, .C = plan.shape.classes()});
  return out;
}

}  // namespace core
