// Calling any kernel's CPU twin or reference through the kernel table (see kernel_calls.hpp), and the generic 16-bit
// variant: widen the 16-bit operands, run the fp32 twin, narrow the 16-bit outputs.
#include "cpu/kernel_calls.hpp"

#include <array>
#include <string>

#include "core/error.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/storage16.hpp"

namespace cpu {
namespace {

constexpr size_t kMaxBindings = 8;

void check(const core::KernelDef& def, core::Precision precision, size_t bindings) {
  if (!def.exists_in(precision))
    throw core::Error(core::ErrorKind::Internal,
                      std::string(def.name) + " has no " + core::to_string(precision) + " variant");
  if (bindings != def.binding_count(precision) || bindings > kMaxBindings)
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + ": " + std::to_string(bindings) +
                                                     " bindings given, the " + core::to_string(precision) +
                                                     " variant has " + std::to_string(def.binding_count(precision)));
}

// The element count of each 16-bit binding the call touches (0 for the others).
std::array<size_t, kMaxBindings> widened_elements(const core::KernelDef& def, const core::PlanEntry& e,
                                                  const core::StepArgs& s, core::Precision precision) {
  std::array<size_t, kMaxBindings> n{};
  for (size_t i = 0; i < def.binding_count(precision); ++i) {
    const core::BindingDef& b = def.bindings[i];
    if (b.elem == core::Elem::Storage) n[i] = b.elements(e, s);
  }
  return n;
}

// The 16-bit variant of a kernel without 16-bit code of its own.
void run_widened(const Kernel& k, const core::PlanEntry& e, const core::StepArgs& s, std::span<void* const> bindings,
                 const KernelContext& ctx) {
  const core::KernelDef& def = core::kernel_def(e.op);
  const std::array<size_t, kMaxBindings> n = widened_elements(def, e, s, ctx.precision);
  std::array<float*, kMaxBindings> fp32{};
  ctx.workspace.carve(fp32.data(), n.data(), static_cast<int>(bindings.size()));
  std::array<void*, kMaxBindings> args{};
  std::array<Widen, kMaxBindings> widen{};
  std::array<Narrow, kMaxBindings> narrow{};
  size_t widens = 0, narrows = 0;
  for (size_t i = 0; i < bindings.size(); ++i) {
    args[i] = bindings[i];
    if (def.bindings[i].elem != core::Elem::Storage) continue;
    auto* bits = static_cast<uint16_t*>(bindings[i]);
    args[i] = n[i] > 0 && bits ? fp32[i] : nullptr;  // an untouched 16-bit binding stays null
    if (!args[i]) continue;
    if (def.bindings[i].access != core::Access::Write) widen[widens++] = {fp32[i], bits, n[i]};
    if (def.bindings[i].writes()) narrow[narrows++] = {bits, fp32[i], n[i]};
  }
  widen_all(std::span<const Widen>(widen.data(), widens), ctx.precision, ctx.pool);
  k.tuned(Bindings(std::span<void* const>(args.data(), bindings.size())), def.args(e, s), ctx.pool);
  narrow_all(std::span<const Narrow>(narrow.data(), narrows), ctx.precision, ctx.pool);
}

}  // namespace

void run_kernel(const core::PlanEntry& e, const core::StepArgs& s, std::span<void* const> bindings,
                const KernelContext& ctx) {
  const core::KernelDef& def = core::kernel_def(e.op);
  check(def, ctx.precision, bindings.size());
  const Kernel& k = kernel(e.op);
  if (ctx.precision == core::Precision::FP32) return k.tuned(Bindings(bindings), def.args(e, s), ctx.pool);
  if (k.tuned16) return k.tuned16(Bindings(bindings), def.args(e, s), ctx.precision, ctx.pool);
  run_widened(k, e, s, bindings, ctx);
}

size_t workspace_floats(const core::PlanEntry& e, core::Precision precision) {
  const core::KernelDef& def = core::kernel_def(e.op);
  if (precision == core::Precision::FP32 || !def.exists_in(precision) || kernel(e.op).tuned16) return 0;
  const std::array<size_t, kMaxBindings> n = widened_elements(def, e, core::StepArgs{}, precision);
  return Workspace16::floats_for(n.data(), static_cast<int>(def.binding_count(precision)));
}

void run_reference(const core::PlanEntry& e, const core::StepArgs& s, std::span<std::vector<double>> bindings,
                   core::Precision precision) {
  // Absent bindings are passed as empty vectors: the span covers every binding of the kernel.
  const core::KernelDef& def = core::kernel_def(e.op);
  if (!def.exists_in(precision) || bindings.size() != def.bindings.size())
    throw core::Error(core::ErrorKind::Internal, std::string(def.name) + ": the reference takes every binding");
  kernel(e.op).reference(bindings, def.args(e, s));
}

}  // namespace cpu
