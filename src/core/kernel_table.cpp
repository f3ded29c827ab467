// The kernel table's vocabulary (see kernel_table.hpp): element types, roles, variants, push-constant words, the step's
// settings and the tests' tolerances; and the table itself, assembled from the entries kernels::<kernel> through the
// generated kernel list (cmake/kernels.cmake). The entries are written in src/cpu/ops/<kernel>.cpp and compiled into
// trainscope_kernels, whose objects are archived with these (src/CMakeLists.txt): the table needs no CPU code. Each
// entry gets its Op and name from the list, so an entry cannot be filed under another kernel's name; the invariants the
// backends rely on are checked once, on first use (the CPU's own, a reference and a twin for each, by cpu::kernel()).
#include "core/kernel_table.hpp"

#include <string>

#include "core/error.hpp"

namespace kernels {
#define TRAINSCOPE_KERNEL(name) extern const core::KernelDef name;
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
}  // namespace kernels

namespace core {
namespace {

struct Listed {
  const KernelDef* def;
  const char* name;
};

// In core::Op order: the same list, in the same order, as the enum.
const Listed kListed[] = {
#define TRAINSCOPE_KERNEL(name) {&kernels::name, #name},
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
};
static_assert(std::size(kListed) == kOpCount);

void check(const KernelDef& d) {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::Internal, std::string("kernel table: ") + d.name + " " + what);
  };
  for (size_t b = 1; b < d.bindings.size(); ++b)
    if (d.bindings[b].when < d.bindings[b - 1].when) fail("has an optional binding before a binding it always has");
  if (d.params_bytes == 0 || d.params_bytes > 128) fail("has a params struct of 0 or more than 128 bytes");
  if (!d.grid_size || !d.args || !d.flops || !d.bytes_read || !d.bytes_written) fail("lacks a formula");
}

struct Table {
  std::vector<KernelDef> defs;
  Table() {
    for (size_t i = 0; i < std::size(kListed); ++i) {
      KernelDef d = *kListed[i].def;
      d.op = static_cast<Op>(i);
      d.name = kListed[i].name;
      check(d);
      defs.push_back(std::move(d));
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

std::span<const KernelDef> kernel_table() { return table().defs; }

const KernelDef& kernel_def(Op op) { return table().defs.at(static_cast<size_t>(op)); }

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
      "DLogits", "Losses",   "Correct", "Predictions", "LossHistory", "Params", "Grads",  "State1", "State2",
      "Weights16", "Scaler", "ScaleHistory", "NormMean", "NormRstd", "AttnLse", "AttnDelta", "AttnScores", "Tokens", "TokenEmb", "PosEmb", "DTokenEmb", "DPosEmb", "Skip", "SplitKPartials", "Placeholder", "StagingX", "StagingY"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Role::StagingY) + 1);
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
