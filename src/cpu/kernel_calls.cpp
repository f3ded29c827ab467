// The CPU twin and the reference of every kernel behind one calling convention (see kernel_calls.hpp): per kernel, a
// row of three functions that unpack its bindings and push-constant struct and call cpu/kernels*.hpp or
// cpu/reference.hpp. The rows are in core::Op order, checked against the kernel table's names.
#include "cpu/kernel_calls.hpp"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>

#include "core/error.hpp"
#include "cpu/kernels.hpp"
#include "cpu/kernels16.hpp"
#include "cpu/reference.hpp"

namespace cpu {

namespace {

using core::KernelArgs;
using core::Precision;
using Bindings = std::span<void* const>;
using RefBindings = std::span<std::vector<double>>;

template <typename T>
T* at(Bindings b, size_t i) {
  return i < b.size() ? static_cast<T*>(b[i]) : nullptr;
}
bool fp32(const KernelContext& c) { return c.precision == Precision::FP32; }
Storage16 s16(const KernelContext& c) { return c.precision == Precision::FP16 ? Storage16::FP16 : Storage16::BF16; }
core::Activation activation_of(uint32_t code) { return code == 0 ? core::Activation::ReLU : core::Activation::GELU; }

// The reference's view of a binding held as doubles.
double* d(RefBindings b, size_t i) { return i < b.size() && !b[i].empty() ? b[i].data() : nullptr; }
std::vector<int32_t> ints(const std::vector<double>& v) { return std::vector<int32_t>(v.begin(), v.end()); }
core::LossScalerBuffer scaler_of(const std::vector<double>& v) {
  core::LossScalerBuffer s{};
  s.scale = static_cast<float>(v.at(0));
  s.growth_tracker = static_cast<uint32_t>(v.at(1));
  s.skipped = static_cast<uint32_t>(v.at(2));
  s.found_inf = static_cast<uint32_t>(v.at(3));
  s.optimizer_steps = static_cast<uint32_t>(v.at(4));
  s.beta1_pow = static_cast<float>(v.at(5));
  s.beta2_pow = static_cast<float>(v.at(6));
  return s;
}
void store_scaler(std::vector<double>& v, const core::LossScalerBuffer& s) {
  v = {s.scale, double(s.growth_tracker), double(s.skipped), double(s.found_inf), double(s.optimizer_steps),
       s.beta1_pow, s.beta2_pow, double(s.reserved)};
}
size_t floats_for(std::initializer_list<long> sizes) {
  std::vector<size_t> s(sizes.begin(), sizes.end());
  return Workspace16::floats_for(s.data(), static_cast<int>(s.size()));
}

// fp16 loss scaling (the scaler binding is present): the optimizers skip a step whose gradients overflowed, unscale
// the others by 1 / scale, and count t on the scaler's step clock, as the shaders do.
struct Unscale {
  bool skip = false;
  float grad_scale = 1.0f;
  long t = 0;
};
Unscale unscale(const core::LossScalerBuffer* s, long t) {
  if (!s) return {false, 1.0f, t};
  return {s->found_inf != 0, 1.0f / s->scale, static_cast<long>(s->optimizer_steps) + 1};
}

// ---- gather_batch: x_out, y_out, x, y, order ----
void gather_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::GatherBatchParams>();
  const uint32_t* order = at<uint32_t>(b, 4) + p.first;
  if (fp32(c))
    gather_batch(at<float>(b, 0), at<int32_t>(b, 1), at<float>(b, 2), at<int32_t>(b, 3), order, p.B, p.C, c.pool);
  else
    gather_batch16(at<uint16_t>(b, 0), at<int32_t>(b, 1), at<float>(b, 2), at<int32_t>(b, 3), order, p.B, p.C, s16(c),
                   c.pool);
}
void gather_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::GatherBatchParams>();
  std::vector<int32_t> y_out(b[1].size()), y = ints(b[3]);
  const std::vector<uint32_t> order(b[4].begin(), b[4].end());
  reference::gather_batch(d(b, 0), y_out.data(), d(b, 2), y.data(), order.data(), p.B, p.C, p.first);
  for (uint32_t i = 0; i < p.B; ++i) b[1][i] = y_out[i];
}

// ---- matmul_forward: out, preact, inp, weight, bias ----
void forward_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::MatmulForwardParams>();
  const bool act = p.apply_act != 0, bias = p.add_bias != 0;  // without the bias (--unfused): the plain GEMM
  if (fp32(c))
    matmul_forward(at<float>(b, 0), act ? at<float>(b, 1) : nullptr, at<float>(b, 2), at<float>(b, 3),
                   bias ? at<float>(b, 4) : nullptr, p.B, p.C, p.OC, act, activation_of(p.act), c.pool);
  else
    matmul_forward16(at<uint16_t>(b, 0), act ? at<uint16_t>(b, 1) : nullptr, at<uint16_t>(b, 2), at<uint16_t>(b, 3),
                     bias ? at<uint16_t>(b, 4) : nullptr, p.B, p.C, p.OC, act, activation_of(p.act), s16(c),
                     c.workspace, c.pool);
}
void forward_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::MatmulForwardParams>();
  reference::matmul_forward(d(b, 0), d(b, 1), d(b, 2), d(b, 3), p.add_bias != 0 ? d(b, 4) : nullptr, p.B, p.C, p.OC,
                            p.apply_act != 0, activation_of(p.act));
}
size_t forward_ws(const core::PlanEntry& e) {
  return floats_for({e.B * e.C, e.OC * e.C, e.epilogue ? e.OC : 0, e.B * e.OC,
                     e.epilogue && e.activation ? e.B * e.OC : 0});
}

// ---- bias_add (--unfused): out, bias ----
void bias_add_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::BiasAddParams>();
  if (fp32(c))
    bias_add(at<float>(b, 0), at<float>(b, 1), p.B, p.OC, c.pool);
  else
    bias_add16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), p.B, p.OC, s16(c), c.pool);
}
void bias_add_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::BiasAddParams>();
  reference::bias_add(d(b, 0), d(b, 1), p.B, p.OC);
}

// ---- act_forward (--unfused): preact, out ----
void act_forward_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::ActForwardParams>();
  if (fp32(c))
    act_forward(at<float>(b, 0), at<float>(b, 1), p.N, activation_of(p.act), c.pool);
  else
    act_forward16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), p.N, activation_of(p.act), s16(c), c.pool);
}
void act_forward_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::ActForwardParams>();
  reference::act_forward(d(b, 0), d(b, 1), p.N, activation_of(p.act));
}

// ---- softmax_xent_forward_backward: losses, dlogits, correct, logits, labels [, scaler] ----
void softmax_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::SoftmaxXentParams>();
  const auto* scaler = at<core::LossScalerBuffer>(b, 5);
  const float dloss_scale = scaler ? p.dloss_scale * scaler->scale : p.dloss_scale;  // fp16: d(scale * loss)
  float* losses = at<float>(b, 0) + p.out_offset;
  int32_t* correct = at<int32_t>(b, 2) ? at<int32_t>(b, 2) + p.out_offset : nullptr;
  if (fp32(c))
    softmax_xent_forward_backward(losses, p.write_grad ? at<float>(b, 1) : nullptr, correct, at<float>(b, 3),
                                  at<int32_t>(b, 4), p.B, p.K, dloss_scale, c.pool);
  else
    softmax_xent_forward_backward16(losses, p.write_grad ? at<uint16_t>(b, 1) : nullptr, correct, at<uint16_t>(b, 3),
                                    at<int32_t>(b, 4), p.B, p.K, dloss_scale, s16(c), c.pool);
}
void softmax_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::SoftmaxXentParams>();
  const double scale = d(b, 5) ? b[5][0] : 1.0;
  const std::vector<int32_t> labels = ints(b[4]);
  std::vector<int32_t> correct = ints(b[2]);
  reference::softmax_xent_forward_backward(d(b, 0) + p.out_offset, p.write_grad ? d(b, 1) : nullptr,
                                           correct.empty() ? nullptr : correct.data() + p.out_offset, d(b, 3),
                                           labels.data(), p.B, p.K, double(p.dloss_scale) * scale);
  std::copy(correct.begin(), correct.end(), b[2].begin());
}

// ---- loss_reduce: loss_history, losses ----
void loss_reduce_cpu(Bindings b, const KernelArgs& a, const KernelContext&) {
  const auto p = a.as<core::LossReduceParams>();
  at<float>(b, 0)[p.slot] = loss_reduce(at<float>(b, 1), p.B);
}
void loss_reduce_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::LossReduceParams>();
  b[0][p.slot] = reference::loss_reduce(d(b, 1), p.B);
}

// ---- act_backward: dpreact, dout, preact (dpreact may be dout: element-wise, in place) ----
void act_backward_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::ActBackwardParams>();
  if (fp32(c))
    act_backward(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), p.N, activation_of(p.act), c.pool);
  else
    act_backward16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), at<uint16_t>(b, 2), p.N, activation_of(p.act), s16(c),
                   c.pool);
}
void act_backward_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::ActBackwardParams>();
  reference::act_backward(d(b, 0), d(b, 1), d(b, 2), p.N, activation_of(p.act));
}

// ---- matmul_backward_weight: dweight, dout, inp ----
void backward_weight_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::MatmulBackwardParams>();
  if (fp32(c))
    matmul_backward_weight(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), p.B, p.C, p.OC, c.pool);
  else
    matmul_backward_weight16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), at<uint16_t>(b, 2), p.B, p.C, p.OC, s16(c),
                             c.workspace, c.pool);
}
void backward_weight_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::MatmulBackwardParams>();
  reference::matmul_backward_weight(d(b, 0), d(b, 1), d(b, 2), p.B, p.C, p.OC);
}
size_t backward_weight_ws(const core::PlanEntry& e) { return floats_for({e.B * e.OC, e.B * e.C, e.OC * e.C}); }

// ---- bias_backward: dbias, dout ----
void bias_backward_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::BiasBackwardParams>();
  if (fp32(c))
    bias_backward(at<float>(b, 0), at<float>(b, 1), p.B, p.OC, c.pool);
  else
    bias_backward16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), p.B, p.OC, s16(c), c.workspace, c.pool);
}
void bias_backward_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::BiasBackwardParams>();
  reference::bias_backward(d(b, 0), d(b, 1), p.B, p.OC);
}
size_t bias_backward_ws(const core::PlanEntry& e) { return floats_for({e.B * e.OC, e.OC}); }

// ---- matmul_backward_data: dinp, dout, weight ----
void backward_data_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::MatmulBackwardParams>();
  if (fp32(c))
    matmul_backward_data(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), p.B, p.C, p.OC, c.pool);
  else
    matmul_backward_data16(at<uint16_t>(b, 0), at<uint16_t>(b, 1), at<uint16_t>(b, 2), p.B, p.C, p.OC, s16(c),
                           c.workspace, c.pool);
}
void backward_data_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::MatmulBackwardParams>();
  reference::matmul_backward_data(d(b, 0), d(b, 1), d(b, 2), p.B, p.C, p.OC);
}
size_t backward_data_ws(const core::PlanEntry& e) { return floats_for({e.B * e.OC, e.OC * e.C, e.B * e.C}); }

// ---- adamw_update: params, m, v, grads [, weights16] [, scaler] ----
void adamw_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::AdamWParams>();
  if (fp32(c)) {
    adamw_update(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), at<float>(b, 3), p.N, p.lr, p.beta1, p.beta2,
                 p.eps, p.weight_decay, p.t, c.pool);
    return;
  }
  const Unscale u = unscale(at<core::LossScalerBuffer>(b, 5), p.t);
  if (u.skip) return;
  adamw_update16(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), at<uint16_t>(b, 4), at<uint16_t>(b, 3), p.N,
                 p.lr, p.beta1, p.beta2, p.eps, p.weight_decay, u.t, s16(c), c.pool, u.grad_scale);
}
void adamw_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::AdamWParams>();
  const core::LossScalerBuffer s = d(b, 5) ? scaler_of(b[5]) : core::LossScalerBuffer{};
  const Unscale u = unscale(d(b, 5) ? &s : nullptr, p.t);
  if (u.skip) return;
  reference::adamw_update(d(b, 0), d(b, 1), d(b, 2), d(b, 3), p.N, p.lr, p.beta1, p.beta2, p.eps, p.weight_decay,
                          u.t, u.grad_scale);
  if (d(b, 4)) std::copy(b[0].begin(), b[0].begin() + p.N, b[4].begin());  // weights16: the new masters
}

// ---- sgd_update: params, momentum_buf, grads [, weights16] [, scaler] ----
void sgd_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::SgdParams>();
  if (fp32(c)) {
    sgd_update(at<float>(b, 0), at<float>(b, 1), at<float>(b, 2), p.N, p.lr, p.momentum, p.weight_decay, p.t,
               c.pool);
    return;
  }
  const Unscale u = unscale(at<core::LossScalerBuffer>(b, 4), p.t);
  if (u.skip) return;
  sgd_update16(at<float>(b, 0), at<float>(b, 1), at<uint16_t>(b, 3), at<uint16_t>(b, 2), p.N, p.lr, p.momentum,
               p.weight_decay, u.t, s16(c), c.pool, u.grad_scale);
}
void sgd_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::SgdParams>();
  const core::LossScalerBuffer s = d(b, 4) ? scaler_of(b[4]) : core::LossScalerBuffer{};
  const Unscale u = unscale(d(b, 4) ? &s : nullptr, p.t);
  if (u.skip) return;
  reference::sgd_update(d(b, 0), d(b, 1), d(b, 2), p.N, p.lr, p.momentum, p.weight_decay, u.t, u.grad_scale);
  if (d(b, 3)) std::copy(b[0].begin(), b[0].begin() + p.N, b[3].begin());
}

// ---- check_finite_grads: scaler, grads (fp16 only) ----
void check_finite_cpu(Bindings b, const KernelArgs& a, const KernelContext& c) {
  const auto p = a.as<core::CheckFiniteParams>();
  if (check_finite_grads16(at<uint16_t>(b, 1), p.N, s16(c), c.pool)) at<core::LossScalerBuffer>(b, 0)->found_inf = 1;
}
void check_finite_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::CheckFiniteParams>();
  if (reference::check_finite_grads(d(b, 1), p.N)) b[0][3] = 1;  // found_inf; never cleared here
}

// ---- update_loss_scale: scaler, history (fp16 only) ----
void update_scale_cpu(Bindings b, const KernelArgs& a, const KernelContext&) {
  // core::LossScaler is the host's GradScaler; the step clock advances with every applied update.
  const auto p = a.as<core::UpdateLossScaleParams>();
  auto& s = *at<core::LossScalerBuffer>(b, 0);
  at<core::ScaleHistoryEntry>(b, 1)[p.slot] = {s.scale, s.found_inf};
  core::LossScaler scaler({s.scale, p.growth_factor, p.backoff_factor, p.growth_interval});
  scaler.import_state({s.scale, s.growth_tracker, s.skipped, 0});
  if (scaler.update(s.found_inf != 0)) {
    s.optimizer_steps += 1;
    s.beta1_pow *= p.beta1;
    s.beta2_pow *= p.beta2;
  }
  const core::LossScalerState next = scaler.export_state();
  s.scale = next.scale;
  s.growth_tracker = next.growth_tracker;
  s.skipped = next.skipped;
  s.found_inf = 0;
}
void update_scale_ref(RefBindings b, const KernelArgs& a, Precision) {
  const auto p = a.as<core::UpdateLossScaleParams>();
  core::LossScalerBuffer s = scaler_of(b[0]);
  core::ScaleHistoryEntry h{};
  reference::update_loss_scale(s, h, p);
  store_scaler(b[0], s);
  b[1][2 * p.slot] = h.loss_scale;
  b[1][2 * p.slot + 1] = h.found_inf;
}

size_t no_ws(const core::PlanEntry&) { return 0; }

struct Row {
  const char* name;
  void (*cpu)(Bindings, const KernelArgs&, const KernelContext&);
  void (*ref)(RefBindings, const KernelArgs&, Precision);
  size_t (*workspace)(const core::PlanEntry&);
};

// In core::Op order.
const Row kRows[] = {
    {"gather_batch", gather_cpu, gather_ref, no_ws},
    {"matmul_forward", forward_cpu, forward_ref, forward_ws},
    {"softmax_xent_forward_backward", softmax_cpu, softmax_ref, no_ws},
    {"loss_reduce", loss_reduce_cpu, loss_reduce_ref, no_ws},
    {"act_backward", act_backward_cpu, act_backward_ref, no_ws},
    {"matmul_backward_weight", backward_weight_cpu, backward_weight_ref, backward_weight_ws},
    {"bias_backward", bias_backward_cpu, bias_backward_ref, bias_backward_ws},
    {"matmul_backward_data", backward_data_cpu, backward_data_ref, backward_data_ws},
    {"adamw_update", adamw_cpu, adamw_ref, no_ws},
    {"sgd_update", sgd_cpu, sgd_ref, no_ws},
    {"check_finite_grads", check_finite_cpu, check_finite_ref, no_ws},
    {"update_loss_scale", update_scale_cpu, update_scale_ref, no_ws},
    {"bias_add", bias_add_cpu, bias_add_ref, no_ws},
    {"act_forward", act_forward_cpu, act_forward_ref, no_ws},
};

const Row& row(core::Op op, Precision precision, size_t bindings) {
  const core::KernelDef& def = core::kernel_def(op);
  const size_t i = static_cast<size_t>(op);
  if (i >= std::size(kRows) || std::strcmp(kRows[i].name, def.name) != 0)
    throw core::Error(core::ErrorKind::Internal, std::string("cpu::kernel_calls has no row for ") + def.name);
  if (!def.exists_in(precision))
    throw core::Error(core::ErrorKind::Internal,
                      std::string(def.name) + " has no " + core::to_string(precision) + " variant");
  if (bindings != def.binding_count(precision))
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + ": " + std::to_string(bindings) +
                                                     " bindings given, the " + core::to_string(precision) +
                                                     " variant has " + std::to_string(def.binding_count(precision)));
  return kRows[i];
}

}  // namespace

void run_kernel(core::Op op, std::span<void* const> bindings, const KernelArgs& args, const KernelContext& ctx) {
  row(op, ctx.precision, bindings.size()).cpu(bindings, args, ctx);
}

size_t workspace_floats(const core::PlanEntry& e, Precision precision) {
  if (precision == Precision::FP32) return 0;
  return row(e.op, precision, core::kernel_def(e.op).binding_count(precision)).workspace(e);
}

void run_reference(core::Op op, std::span<std::vector<double>> bindings, const KernelArgs& args,
                   Precision precision) {
  // Absent bindings are passed as empty vectors: the span covers every binding of the kernel.
  const core::KernelDef& def = core::kernel_def(op);
  if (bindings.size() != def.bindings.size())
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + ": the reference takes every binding");
  row(op, precision, def.binding_count(precision)).ref(bindings, args, precision);
}

}  // namespace cpu
