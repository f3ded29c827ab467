// The kernel table's entries (see kernel_table.hpp), one block per kernel in core::Op order. FLOP and byte counts
// follow step_plan.hpp's conventions: a multiply-add is 2 FLOPs; bytes are the compulsory traffic (each tensor read or
// written once, as a perfect cache would), in the storage type e (4 or 2 bytes) where the tensor is stored in it.
#include "core/kernel_table.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace core {

namespace {

using A = Access;
using E = Elem;
using R = Role;

double e_of(Precision p) { return static_cast<double>(storage_bytes(p)); }
constexpr double kIdx = 4;  // int32 labels, uint32 indices
uint32_t u32(long v) { return static_cast<uint32_t>(v); }
uint32_t act_code(Activation a) { return a == Activation::ReLU ? 0u : 1u; }  // ACT_RELU, ACT_GELU (activation.glsl)
double n_of(const PlanEntry& e) { return static_cast<double>(e.N); }
// The work items of a 4-wide element-wise kernel over n elements: one per group of four (the shader's grid-stride loop
// and scalar tail cover any n with that many invocations, rounded up to whole workgroups).
std::array<uint64_t, 2> quads(long n) { return {static_cast<uint64_t>(n + 3) / 4, 1}; }
// split-K's fp32 partial products of matmul_backward_weight, 0 when not split (PlanEntry::split_k).
double split_partials_bytes(const PlanEntry& e) { return e.split_k > 1 ? 4.0 * e.split_k * e.OC * e.C : 0.0; }
bool scaled(Precision p) { return p == Precision::FP16; }  // fp16 trains with loss scaling
// The optimizers' traffic: `tensors` fp32 tensors (params and the optimizer state) read and written; grads read in the
// storage type (with loss scaling also the scaler's scale and found_inf, 16 bytes); in 16-bit the weights copy written.
double optimizer_read(const PlanEntry& e, Precision p, int tensors) {
  return tensors * n_of(e) * 4 + n_of(e) * e_of(p) + (scaled(p) ? 16 : 0);
}
double optimizer_written(const PlanEntry& e, Precision p, int tensors) {
  return tensors * n_of(e) * 4 + (e_of(p) < 4 ? n_of(e) * e_of(p) : 0);
}

std::vector<KernelDef> make_table() {
  std::vector<KernelDef> t;

  t.push_back({Op::GatherBatch, "gather_batch",
               {{"x_out", A::Write, E::Storage, R::XBatch, When::Always, false, true},
                {"y_out", A::Write, E::I32, R::YBatch},
                {"x", A::Read, E::F32, R::DataX},
                {"y", A::Read, E::I32, R::DataY},
                {"order", A::Read, E::U32, R::Order}},
               sizeof(GatherBatchParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.B * e.C); },
               [](const PlanEntry& e, const StepArgs& s) {
                 return KernelArgs::of(GatherBatchParams{u32(e.B), u32(e.C), s.first});
               },
               [](const PlanEntry&, Precision) { return 0.0; },
               // rows of the fp32 dataset, their indices and labels
               [](const PlanEntry& e, Precision) { return e.B * e.C * 4.0 + 2 * e.B * kIdx; },
               [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p) + e.B * kIdx; }});

  t.push_back({Op::MatmulForward, "matmul_forward",
               {{"out", A::Write, E::Storage, R::Act, When::Always, true},
                {"preact", A::Write, E::Storage, R::Preact, When::Always, true},
                {"inp", A::Read, E::Storage, R::LayerIn},
                {"weight", A::Read, E::Storage, R::Weight},
                {"bias", A::Read, E::Storage, R::Bias}},
               sizeof(MatmulForwardParams), Grid::Gemm, 0, false,
               [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), uint64_t(e.OC)}; },
               [](const PlanEntry& e, const StepArgs& s) {
                 const uint32_t apply_act = e.epilogue && e.activation ? 1u : 0u;
                 return KernelArgs::of(MatmulForwardParams{u32(e.B), u32(e.C), u32(e.OC), apply_act,
                                                           act_code(s.activation), e.epilogue ? 1u : 0u});
               },
               // multiply-adds plus the bias (without the epilogue: the multiply-adds); the activation is not counted
               [](const PlanEntry& e, Precision) { return 2.0 * e.B * e.C * e.OC + (e.epilogue ? e.B * e.OC : 0); },
               [](const PlanEntry& e, Precision p) {
                 return (e.B * e.C + e.OC * e.C + (e.epilogue ? e.OC : 0)) * e_of(p);
               },
               // out, and preact for act_backward (fused hidden layers)
               [](const PlanEntry& e, Precision p) {
                 return e.B * e.OC * e_of(p) * (e.epilogue && e.activation ? 2 : 1);
               }});

  t.push_back({Op::SoftmaxXentForwardBackward, "softmax_xent_forward_backward",
               {{"losses", A::Write, E::F32, R::Losses},
                {"dlogits", A::Write, E::Storage, R::DLogits},
                {"correct", A::Write, E::I32, R::Correct},
                {"logits", A::Read, E::Storage, R::Logits},
                {"labels", A::Read, E::I32, R::YBatch},
                {"scaler", A::Read, E::LossScaler, R::Scaler, When::LossScaling}},
               sizeof(SoftmaxXentParams), Grid::Rows, 64, false,
               [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), 1}; },
               [](const PlanEntry& e, const StepArgs& s) {
                 // Training: the gradient of the mean loss (1/B); evaluation writes no gradient.
                 const float dloss_scale = s.evaluation ? 1.0f : 1.0f / static_cast<float>(e.B);
                 return KernelArgs::of(
                     SoftmaxXentParams{u32(e.B), u32(e.C), dloss_scale, s.evaluation ? 0u : 1u, s.out_offset});
               },
               // max, exp, sum, divide, subtract per logit (an estimate of the element-wise work)
               [](const PlanEntry& e, Precision) { return 5.0 * e.B * e.C; },
               // logits once, labels; with loss scaling the scale
               [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p) + e.B * kIdx + (scaled(p) ? 4 : 0); },
               // dlogits; per-sample losses (fp32 in every precision) and correct flags (int32)
               [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p) + e.B * 4.0 + e.B * kIdx; }});

  t.push_back({Op::LossReduce, "loss_reduce",
               {{"loss_history", A::Write, E::F32, R::LossHistory}, {"losses", A::Read, E::F32, R::Losses}},
               sizeof(LossReduceParams), Grid::Single, 256, false,
               [](const PlanEntry&) { return std::array<uint64_t, 2>{1, 1}; },
               [](const PlanEntry& e, const StepArgs& s) { return KernelArgs::of(LossReduceParams{u32(e.B), s.slot}); },
               [](const PlanEntry& e, Precision) { return static_cast<double>(e.B); },
               [](const PlanEntry& e, Precision) { return e.B * 4.0; },  // fp32 per-sample losses
               [](const PlanEntry&, Precision) { return 4.0; }});

  t.push_back({Op::ActBackward, "act_backward",
               {{"dpreact", A::Write, E::Storage, R::DPreact},
                {"dout", A::Read, E::Storage, R::DAct},
                {"preact", A::Read, E::Storage, R::Preact}},
               sizeof(ActBackwardParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.N); },
               [](const PlanEntry& e, const StepArgs& s) {
                 return KernelArgs::of(ActBackwardParams{static_cast<uint32_t>(e.N), act_code(s.activation)});
               },
               [](const PlanEntry& e, Precision) { return n_of(e); },
               [](const PlanEntry& e, Precision p) { return 2.0 * n_of(e) * e_of(p); },
               [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); }});

  t.push_back({Op::MatmulBackwardWeight, "matmul_backward_weight",
               {{"dweight", A::Write, E::Storage, R::DWeight, When::Always, true},
                {"dout", A::Read, E::Storage, R::DPreact},
                {"inp", A::Read, E::Storage, R::LayerIn}},
               sizeof(MatmulBackwardParams), Grid::Gemm, 0, false,
               [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.OC), uint64_t(e.C)}; },
               [](const PlanEntry& e, const StepArgs&) {
                 return KernelArgs::of(MatmulBackwardParams{u32(e.B), u32(e.C), u32(e.OC), u32(e.k_slice())});
               },
               // split-K (PlanEntry::split_k > 1): the reduce adds split_k - 1 partials per output, and the fp32
               // partials (split_k x OC x C) are written by the GEMM pass and read by the reduce
               [](const PlanEntry& e, Precision) {
                 return 2.0 * e.B * e.C * e.OC + (e.split_k > 1 ? (e.split_k - 1.0) * e.C * e.OC : 0.0);
               },
               [](const PlanEntry& e, Precision p) {
                 return (e.B * e.OC + e.B * e.C) * e_of(p) + split_partials_bytes(e);
               },
               [](const PlanEntry& e, Precision p) { return e.OC * e.C * e_of(p) + split_partials_bytes(e); }});

  t.push_back({Op::BiasBackward, "bias_backward",
               {{"dbias", A::Write, E::Storage, R::DBias, When::Always, true},
                {"dout", A::Read, E::Storage, R::DPreact}},
               sizeof(BiasBackwardParams), Grid::Rows, 64, false,
               [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.OC), 1}; },
               [](const PlanEntry& e, const StepArgs&) {
                 return KernelArgs::of(BiasBackwardParams{u32(e.B), u32(e.OC)});
               },
               [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
               [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); },
               [](const PlanEntry& e, Precision p) { return e.OC * e_of(p); }});

  t.push_back({Op::MatmulBackwardData, "matmul_backward_data",
               {{"dinp", A::Write, E::Storage, R::DLayerIn, When::Always, true},
                {"dout", A::Read, E::Storage, R::DPreact},
                {"weight", A::Read, E::Storage, R::Weight}},
               sizeof(MatmulBackwardParams), Grid::Gemm, 0, false,
               [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), uint64_t(e.C)}; },
               [](const PlanEntry& e, const StepArgs&) {
                 return KernelArgs::of(MatmulBackwardParams{u32(e.B), u32(e.C), u32(e.OC), u32(e.B)});
               },
               [](const PlanEntry& e, Precision) { return 2.0 * e.B * e.C * e.OC; },
               [](const PlanEntry& e, Precision p) { return (e.B * e.OC + e.OC * e.C) * e_of(p); },
               [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p); }});

  // The optimizers: fp32 master params and state; grads in the storage type; in 16-bit, also the 16-bit copy of the
  // new params; with loss scaling, 16 bytes of the scaler (scale, found_inf) read and one unscaling multiply more.
  t.push_back({Op::AdamWUpdate, "adamw_update",
               {{"params", A::ReadWrite, E::F32, R::Params},
                {"m", A::ReadWrite, E::F32, R::State1},
                {"v", A::ReadWrite, E::F32, R::State2},
                {"grads", A::Read, E::Storage, R::Grads},
                {"weights16", A::Write, E::Storage, R::Weights16, When::SixteenBit},
                {"scaler", A::Read, E::LossScaler, R::Scaler, When::LossScaling}},
               sizeof(AdamWParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.N); },
               [](const PlanEntry& e, const StepArgs& s) {
                 // torch.optim.AdamW's bias corrections for step t, in double as torch computes them in Python floats.
                 const float bc1 = static_cast<float>(1.0 - std::pow(double(s.beta1), double(s.t)));
                 const float bc2 = static_cast<float>(1.0 - std::pow(double(s.beta2), double(s.t)));
                 return KernelArgs::of(AdamWParams{static_cast<uint32_t>(e.N), s.lr, s.beta1, s.beta2, s.eps,
                                                   s.weight_decay, bc1, bc2, static_cast<uint32_t>(s.t)});
               },
               // decay 2, m 3, v 4, bias corrections 2, sqrt/divide/update 4
               [](const PlanEntry& e, Precision p) { return 15 * n_of(e) + (scaled(p) ? n_of(e) : 0); },
               [](const PlanEntry& e, Precision p) { return optimizer_read(e, p, 3); },
               [](const PlanEntry& e, Precision p) { return optimizer_written(e, p, 3); }});

  t.push_back({Op::SgdUpdate, "sgd_update",
               {{"params", A::ReadWrite, E::F32, R::Params},
                {"momentum_buf", A::ReadWrite, E::F32, R::State1},
                {"grads", A::Read, E::Storage, R::Grads},
                {"weights16", A::Write, E::Storage, R::Weights16, When::SixteenBit},
                {"scaler", A::Read, E::LossScaler, R::Scaler, When::LossScaling}},
               sizeof(SgdParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.N); },
               [](const PlanEntry& e, const StepArgs& s) {
                 return KernelArgs::of(SgdParams{static_cast<uint32_t>(e.N), s.lr, s.momentum, s.weight_decay,
                                                 static_cast<uint32_t>(s.t)});
               },
               // decay 2, momentum 2, update 2
               [](const PlanEntry& e, Precision p) { return 6 * n_of(e) + (scaled(p) ? n_of(e) : 0); },
               [](const PlanEntry& e, Precision p) { return optimizer_read(e, p, 2); },
               [](const PlanEntry& e, Precision p) { return optimizer_written(e, p, 2); }});

  t.push_back({Op::CheckFiniteGrads, "check_finite_grads",
               {{"scaler", A::ReadWrite, E::LossScaler, R::Scaler}, {"grads", A::Read, E::Storage, R::Grads}},
               sizeof(CheckFiniteParams), Grid::Elements, 256, true,
               [](const PlanEntry& e) { return quads(e.N); },
               [](const PlanEntry& e, const StepArgs&) {
                 return KernelArgs::of(CheckFiniteParams{static_cast<uint32_t>(e.N)});
               },
               [](const PlanEntry&, Precision) { return 0.0; },  // a comparison per element, no arithmetic
               [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); },
               [](const PlanEntry&, Precision) { return 4.0; }});  // the found_inf flag

  t.push_back({Op::UpdateLossScale, "update_loss_scale",
               {{"scaler", A::ReadWrite, E::LossScaler, R::Scaler},
                {"history", A::Write, E::ScaleHistory, R::ScaleHistory}},
               sizeof(UpdateLossScaleParams), Grid::Single, 1, true,
               [](const PlanEntry&) { return std::array<uint64_t, 2>{1, 1}; },
               [](const PlanEntry&, const StepArgs& s) {
                 return KernelArgs::of(UpdateLossScaleParams{s.scaler.growth_factor, s.scaler.backoff_factor,
                                                             s.scaler.growth_interval, s.slot, s.beta1, s.beta2});
               },
               [](const PlanEntry&, Precision) { return 1.0; },
               [](const PlanEntry&, Precision) { return 16.0; },          // the scaler state
               [](const PlanEntry&, Precision) { return 16.0 + 8.0; }});  // the state, this step's history entry

  // --unfused: the epilogue of matmul_forward as two kernels. Each reads back the (B,OC) output the GEMM just wrote
  // and writes it again: the extra traffic that fusing saves.
  t.push_back({Op::BiasAdd, "bias_add",
               {{"out", A::ReadWrite, E::Storage, R::Act}, {"bias", A::Read, E::Storage, R::Bias}},
               sizeof(BiasAddParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.B * e.OC); },
               [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(BiasAddParams{u32(e.B), u32(e.OC)}); },
               [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
               [](const PlanEntry& e, Precision p) { return (e.B * e.OC + e.OC) * e_of(p); },
               [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); }});

  t.push_back({Op::ActForward, "act_forward",
               {{"preact", A::Write, E::Storage, R::Preact}, {"out", A::ReadWrite, E::Storage, R::Act}},
               sizeof(ActForwardParams), Grid::Elements, 256, false,
               [](const PlanEntry& e) { return quads(e.N); },
               [](const PlanEntry& e, const StepArgs& s) {
                 return KernelArgs::of(ActForwardParams{static_cast<uint32_t>(e.N), act_code(s.activation)});
               },
               [](const PlanEntry&, Precision) { return 0.0; },  // the activation is not counted (as matmul_forward)
               [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); },
               [](const PlanEntry& e, Precision p) { return 2.0 * n_of(e) * e_of(p); }});  // preact and out
  return t;
}

// The invariants the backends rely on, checked once: Op order, optional bindings last (SixteenBit before
// LossScaling), params within the 128 bytes every device accepts.
const std::vector<KernelDef>& checked_table() {
  static const std::vector<KernelDef> table = [] {
    std::vector<KernelDef> t = make_table();
    for (size_t i = 0; i < t.size(); ++i) {
      const KernelDef& d = t[i];
      if (static_cast<size_t>(d.op) != i)
        throw Error(ErrorKind::Internal, std::string("kernel table: ") + d.name + " is out of core::Op order");
      for (size_t b = 1; b < d.bindings.size(); ++b)
        if (d.bindings[b].when < d.bindings[b - 1].when)
          throw Error(ErrorKind::Internal,
                      std::string("kernel table: ") + d.name + "'s optional bindings must come last");
      if (d.params_bytes == 0 || d.params_bytes > 128)
        throw Error(ErrorKind::Internal, std::string("kernel table: ") + d.name + "'s params exceed 128 bytes");
    }
    return t;
  }();
  return table;
}

}  // namespace

size_t elem_bytes(Elem elem, Precision precision) {
  switch (elem) {
    case Elem::Storage: return storage_bytes(precision);
    case Elem::F32:
    case Elem::I32:
    case Elem::U32: return 4;
    case Elem::LossScaler: return sizeof(LossScalerBuffer);
    case Elem::ScaleHistory: return sizeof(ScaleHistoryEntry);
  }
  return 4;
}

const char* to_string(Elem elem) {
  static const char* const names[] = {"storage", "f32", "i32", "u32", "loss scaler", "scale history"};
  return names[static_cast<size_t>(elem)];
}

const char* to_string(Role role) {
  static const char* const names[] = {
      "DataX",   "DataY",    "Order",  "XBatch", "YBatch",      "LayerIn", "Act",    "Preact",
      "DAct",    "DPreact",  "DLayerIn", "Weight", "Bias",      "DWeight", "DBias",  "Logits",
      "DLogits", "Losses",   "Correct", "LossHistory", "Params", "Grads",  "State1", "State2",
      "Weights16", "Scaler", "ScaleHistory"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Role::ScaleHistory) + 1);
  return names[static_cast<size_t>(role)];
}

bool present(When when, Precision precision) {
  switch (when) {
    case When::Always: return true;
    case When::SixteenBit: return precision != Precision::FP32;
    case When::LossScaling: return precision == Precision::FP16;
  }
  return false;
}

uint32_t KernelDef::binding_count(Precision precision) const {
  uint32_t n = 0;
  for (const auto& b : bindings) n += present(b.when, precision) ? 1 : 0;
  return n;
}

void KernelArgs::check_size(size_t size) const {
  if (size != bytes)
    throw Error(ErrorKind::Internal, "kernel arguments of " + std::to_string(bytes) + " bytes read as a struct of " +
                                         std::to_string(size));
}

std::span<const KernelDef> kernel_table() { return checked_table(); }

const KernelDef& kernel_def(Op op) { return checked_table().at(static_cast<size_t>(op)); }

StepArgs step_args(const TrainConfig& cfg, long t, size_t first, uint32_t slot) {
  StepArgs a;
  a.activation = cfg.activation;
  a.lr = cfg.lr;
  a.beta1 = cfg.beta1;
  a.beta2 = cfg.beta2;
  a.eps = cfg.eps;
  a.weight_decay = cfg.effective_weight_decay();
  a.momentum = cfg.momentum;
  a.t = t;
  a.first = static_cast<uint32_t>(first);
  a.slot = slot;
  a.scaler.init_scale = cfg.loss_scale_init;  // GradScaler's defaults otherwise
  return a;
}

Tolerance tolerance(Precision precision) {
  Tolerance t;
  if (precision == Precision::FP16) {
    t.rtol = 1e-3;
    t.atol = 0x1p-14;
  } else if (precision == Precision::BF16) {
    t.rtol = 1.6e-2;  // atol stays fp32's: the arithmetic is fp32, and bf16 has fp32's range (no flushed subnormals)
  }
  return t;
}

}  // namespace core
