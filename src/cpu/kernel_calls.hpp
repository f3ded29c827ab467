// The CPU side of the kernel table (core/kernel_table.hpp): any kernel called the same way, from its bindings and its
// push-constant struct, either as the tuned CPU twin that trains (cpu/kernels.hpp, kernels16.hpp) or as the plain
// reference in double (cpu/reference.hpp) that the tests compare both backends with. cpu::Trainer runs every plan
// entry through run_kernel; tests/test_kernel_parity.cpp runs every kernel through all three paths.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "core/kernel_table.hpp"

namespace cpu {

class ThreadPool;
class Workspace16;

// Where a call runs: the storage precision of its variant, the pool it splits its work over, the scratch of the
// 16-bit kernels (widened operands; see workspace_floats).
struct KernelContext {
  core::Precision precision;
  ThreadPool& pool;
  Workspace16& workspace;
};

// Runs the CPU twin of `op` in ctx.precision. bindings[i] is the memory of the kernel's binding i, in binding order,
// kernel_def(op).binding_count(precision) of them, holding elem_bytes(elem, precision) per element as the shader's
// buffer would. A binding may be null where the twin can skip an output: softmax's correct and, in evaluation,
// dlogits; matmul_forward's preact without the activation. fp16 variants read and write the loss scaler binding as
// the shaders do: the softmax scales dlogits by its scale, check_finite_grads raises found_inf, the optimizers skip
// on found_inf and otherwise unscale and take t from its step clock, update_loss_scale applies GradScaler's rule.
// Throws core::Error(Internal) on a wrong binding count or arguments of another kernel.
void run_kernel(core::Op op, std::span<void* const> bindings, const core::KernelArgs& args, const KernelContext& ctx);

// The fp32 floats the 16-bit twin of plan entry `e` widens its operands into (Workspace16::floats_for of its
// operands; 0 for fp32 and for the kernels that convert chunk by chunk), so that an owner can size its workspace once.
size_t workspace_floats(const core::PlanEntry& e, core::Precision precision);

// Runs the plain reference of `op` in double. bindings[i] holds binding i's elements as doubles (Storage, F32, I32
// and U32 values; a LossScalerBuffer or ScaleHistoryEntry as its members in order, one group per element), empty
// for a binding absent in `precision`. Outputs are written in place; elements a kernel does not write keep their
// values. The reference never rounds: in 16-bit precisions the caller compares its outputs with the rounding in mind.
void run_reference(core::Op op, std::span<std::vector<double>> bindings, const core::KernelArgs& args,
                   core::Precision precision);

}  // namespace cpu
