// Building the StepPlan and its analytic FLOP and byte counts.
// Counting conventions: a multiply-add is 2 FLOPs; bytes are the compulsory traffic (every tensor read or written
// once, as a perfect cache would), so achieved GB/s is a lower bound of the real traffic.
#include "core/step_plan.hpp"

#include <fmt/format.h>

namespace core {

const char* kernel_name(Op op) {
  switch (op) {
    case Op::GatherBatch: return "gather_batch";
    case Op::MatmulForward: return "matmul_forward";
    case Op::SoftmaxXentForwardBackward: return "softmax_xent_forward_backward";
    case Op::LossReduce: return "loss_reduce";
    case Op::ActBackward: return "act_backward";
    case Op::MatmulBackwardWeight: return "matmul_backward_weight";
    case Op::BiasBackward: return "bias_backward";
    case Op::MatmulBackwardData: return "matmul_backward_data";
    case Op::AdamWUpdate: return "adamw_update";
    case Op::SgdUpdate: return "sgd_update";
    case Op::CheckFiniteGrads: return "check_finite_grads";
    case Op::UpdateLossScale: return "update_loss_scale";
  }
  return "?";
}

std::string PlanEntry::label() const {
  switch (op) {
    case Op::MatmulForward:
      return fmt::format("{} L{} ({}x{} -> {}x{})", kernel(), layer + 1, B, C, B, OC);
    case Op::MatmulBackwardWeight:
      return fmt::format("{} L{} (dW {}x{})", kernel(), layer + 1, OC, C);
    case Op::MatmulBackwardData:
      return fmt::format("{} L{} (dinp {}x{})", kernel(), layer + 1, B, C);
    case Op::BiasBackward:
      return fmt::format("{} L{} (db {})", kernel(), layer + 1, OC);
    case Op::ActBackward:
      return fmt::format("{} L{} ({} values)", kernel(), layer + 1, N);
    case Op::AdamWUpdate:
    case Op::SgdUpdate:
    case Op::CheckFiniteGrads:
      return fmt::format("{} ({} parameters)", kernel(), N);
    case Op::UpdateLossScale:
      return kernel();
    default:
      return fmt::format("{} ({}x{})", kernel(), B, C);
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

StepPlan build_step_plan(const ModelShape& shape, int batch, Activation act, Optimizer opt, Precision precision) {
  StepPlan plan;
  plan.precision = precision;
  plan.bytes_per_element = storage_bytes(precision);
  plan.shape = shape;
  plan.batch = batch;
  plan.activation = act;
  plan.optimizer = opt;
  const double e = static_cast<double>(plan.bytes_per_element);
  const double idx = 4;  // int32 labels and uint32 indices
  const long B = batch;
  const int L = shape.layers();
  auto add = [&](PlanEntry entry) { plan.entries.push_back(entry); };

  {  // gather the batch's rows of the training set (kept on the device) into the layer-1 input
    PlanEntry g{Op::GatherBatch};
    g.B = B;
    g.C = shape.inputs();
    g.bytes_read = B * g.C * 4.0 + 2 * B * idx;  // rows of the fp32 training set, indices, labels
    g.bytes_written = B * g.C * e + B * idx;
    add(g);
  }
  for (int l = 0; l < L; ++l) {
    PlanEntry m{Op::MatmulForward};
    m.layer = l;
    m.activation = l < L - 1;
    m.B = B;
    m.C = shape.fan_in(l);
    m.OC = shape.fan_out(l);
    m.flops = 2.0 * B * m.C * m.OC + B * m.OC;  // multiply-adds plus the bias; the activation is not counted
    m.bytes_read = (B * m.C + m.OC * m.C + m.OC) * e;
    m.bytes_written = B * m.OC * e * (m.activation ? 2 : 1);  // out, and preact for act_backward
    add(m);
  }
  const long K = shape.classes();
  {
    PlanEntry s{Op::SoftmaxXentForwardBackward};
    s.B = B;
    s.C = K;
    s.flops = 5.0 * B * K;  // max, exp, sum, divide, subtract per logit (an estimate of the element-wise work)
    s.bytes_read = B * K * e + B * idx;
    s.bytes_written = B * K * e + B * 4.0;  // dlogits; per-sample losses (fp32 in every precision)
    add(s);
    PlanEntry r{Op::LossReduce};
    r.B = B;
    r.flops = static_cast<double>(B);
    r.bytes_read = B * 4.0;  // fp32 per-sample losses
    r.bytes_written = 4;
    add(r);
  }
  for (int l = L - 1; l >= 0; --l) {
    const long C = shape.fan_in(l), OC = shape.fan_out(l);
    if (l < L - 1) {
      PlanEntry a{Op::ActBackward};
      a.layer = l;
      a.B = B;
      a.OC = OC;
      a.N = static_cast<size_t>(B * OC);
      a.flops = static_cast<double>(a.N);
      a.bytes_read = 2.0 * a.N * e;
      a.bytes_written = a.N * e;
      add(a);
    }
    PlanEntry w{Op::MatmulBackwardWeight};
    w.layer = l;
    w.B = B;
    w.C = C;
    w.OC = OC;
    w.flops = 2.0 * B * C * OC;
    w.bytes_read = (B * OC + B * C) * e;
    w.bytes_written = OC * C * e;
    add(w);
    PlanEntry b{Op::BiasBackward};
    b.layer = l;
    b.B = B;
    b.OC = OC;
    b.flops = static_cast<double>(B * OC);
    b.bytes_read = B * OC * e;
    b.bytes_written = OC * e;
    add(b);
    if (l > 0) {
      PlanEntry d{Op::MatmulBackwardData};
      d.layer = l;
      d.B = B;
      d.C = C;
      d.OC = OC;
      d.flops = 2.0 * B * C * OC;
      d.bytes_read = (B * OC + OC * C) * e;
      d.bytes_written = B * C * e;
      add(d);
    }
  }
  const double n = static_cast<double>(shape.param_count);
  if (plan.loss_scaling()) {
    PlanEntry c{Op::CheckFiniteGrads};
    c.N = shape.param_count;
    c.flops = 0;  // a comparison per element, no arithmetic
    c.bytes_read = n * e;
    c.bytes_written = 4;  // the found_inf flag
    add(c);
  }
  PlanEntry u{opt == Optimizer::AdamW ? Op::AdamWUpdate : Op::SgdUpdate};
  u.N = shape.param_count;
  // fp32 master params and state; grads in the storage type; in 16-bit, also the 16-bit copy of the new params.
  const double copy16 = e < 4 ? n * e : 0;
  const double scaler = plan.loss_scaling() ? 16 : 0;  // reads the loss scale and found_inf
  if (opt == Optimizer::AdamW) {
    u.flops = 15 * n;  // decay 2, m 3, v 4, bias corrections 2, sqrt/divide/update 4
    u.bytes_read = 3 * n * 4 + n * e + scaler;  // params, m, v; grads
    u.bytes_written = 3 * n * 4 + copy16;       // params, m, v
  } else {
    u.flops = 6 * n;  // decay 2, momentum 2, update 2
    u.bytes_read = 2 * n * 4 + n * e + scaler;  // params, momentum buffer; grads
    u.bytes_written = 2 * n * 4 + copy16;       // params, momentum buffer
  }
  if (plan.loss_scaling()) u.flops += n;  // the unscaling multiply
  add(u);
  if (plan.loss_scaling()) {
    PlanEntry s{Op::UpdateLossScale};
    s.flops = 1;
    s.bytes_read = 16;      // the scaler state
    s.bytes_written = 16 + 8;  // the state, and this step's (scale, found_inf) for the host
    add(s);
  }
  return plan;
}

}  // namespace core
