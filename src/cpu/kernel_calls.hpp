// The CPU side of the kernel table (core/kernel_table.hpp): any kernel called the same way, from its plan entry, the
// step's settings and the memory of its bindings, either as the tuned CPU twin that trains or as the plain reference
// in double that the tests compare both backends with. Both are found through the table (cpu::kernel(op): the kernel's
// file src/cpu/ops/<kernel>.cpp). cpu::Trainer runs every plan entry through run_kernel; tests/test_kernel_parity.cpp
// runs every kernel through both.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "core/kernel_table.hpp"

namespace cpu {

class ThreadPool;
class Workspace16;

// Where a call runs: the storage precision of its variant, the pool it splits its work over, the fp32 scratch the
// 16-bit variants widen into (see workspace_floats).
struct KernelContext {
  core::Precision precision;
  ThreadPool& pool;
  Workspace16& workspace;
};

// Runs the CPU twin of plan entry `e` with the step's settings `s` in ctx.precision. bindings[i] is the memory of the
// kernel's binding i, in binding order, kernel_def(e.op).binding_count(precision) of them, holding
// elem_bytes(elem, precision) per element as the shader's buffer would. A binding may be null where the call does not
// touch it (BindingDef::elements 0: matmul_forward's preact without the activation; softmax's dlogits in evaluation)
// and where the twin may skip an output (softmax's correct flags).
// In fp16 and bf16 the kernel's 16-bit bindings are widened into ctx.workspace, the fp32 twin runs on them, and its
// 16-bit outputs are rounded back (round to nearest even): bit for bit round(fp32 twin(widened inputs)); kernels with
// 16-bit code of their own (the loss-scaled optimizers, check_finite_grads) run it instead. fp16 variants read and
// write the loss scaler binding as the shaders do: the softmax scales dlogits by its scale, check_finite_grads raises
// found_inf, the optimizers skip on found_inf and otherwise unscale and take t from its step clock,
// update_loss_scale applies GradScaler's rule. Throws core::Error(Internal) on a wrong binding count or a kernel
// without a variant in this precision.
void run_kernel(const core::PlanEntry& e, const core::StepArgs& s, std::span<void* const> bindings,
                const KernelContext& ctx);

// The fp32 floats run_kernel widens plan entry e's operands into in `precision` (0 for fp32 and for kernels with
// 16-bit code of their own), so that an owner can size its workspace once for its largest entry.
size_t workspace_floats(const core::PlanEntry& e, core::Precision precision);

// Runs the plain reference of plan entry e in double. bindings[i] holds binding i's elements as doubles (Storage,
// F32, I32 and U32 values; a LossScalerBuffer or ScaleHistoryEntry as its members in order, one group per element),
// empty for a binding absent in `precision`; every binding of the kernel is given. Outputs are written in place;
// elements a kernel does not write keep their values. The reference never rounds: in 16-bit precisions the caller
// compares its outputs with the rounding in mind.
void run_reference(const core::PlanEntry& e, const core::StepArgs& s, std::span<std::vector<double>> bindings,
                   core::Precision precision);

}  // namespace cpu
