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
      return fmt::format("{} ({} parameters)", kernel(), N);
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

StepPlan build_step_plan(const ModelShape& shape, int batch, Activation act, Optimizer opt) {
  StepPlan plan;
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
    s.bytes_written = B * K * e + B * e;
    add(s);
    PlanEntry r{Op::LossReduce};
    r.B = B;
    r.flops = static_cast<double>(B);
    r.bytes_read = B * e;
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
  PlanEntry u{opt == Optimizer::AdamW ? Op::AdamWUpdate : Op::SgdUpdate};
  u.N = shape.param_count;
  const double n = static_cast<double>(u.N);
  if (opt == Optimizer::AdamW) {
    u.flops = 15 * n;  // decay 2, m 3, v 4, bias corrections 2, sqrt/divide/update 4
    u.bytes_read = 4 * n * 4;     // params, grads, m, v (fp32 master state)
    u.bytes_written = 3 * n * 4;  // params, m, v
  } else {
    u.flops = 6 * n;  // decay 2, momentum 2, update 2
    u.bytes_read = 3 * n * 4;     // params, grads, momentum buffer
    u.bytes_written = 2 * n * 4;  // params, momentum buffer
  }
  add(u);
  return plan;
}

}  // namespace core
