// attention_naive_softmax: the naive attention's second kernel: each row of the scores in memory turned into
// probabilities in place, a pass that reads and writes the whole (B, H, T, T) matrix:
//   att[b, h, t, u] = exp(s_u - max) / sum over u' <= t of exp(s_u' - max) for u <= t, 0 after the diagonal
// A plan entry's B is the sequences, T their length, C the width, heads the heads.
#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_naive_softmax(attention_shape(a.as<core::AttentionParams>()), b.f32(0), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_naive_softmax_reference(attention_shape(a.as<core::AttentionParams>()), b[0]);
}

}  // namespace

const Kernel attention_naive_softmax{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef attention_naive_softmax{
    .bindings = {{.name = "att", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::AttnScores, .elements = shape::attn_matrix}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Elements,
    .local_size = 256,
    // grid-stride over the B * heads * T rows, one invocation per row
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{attn_rows(e), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: the maximum, the subtraction, the exp, the sum and the division
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * 5.0; },
    // the matrix read and written once (the shader reads each row three times: counted once, compulsory)
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e)) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e)) * e_of(p); }};

}  // namespace kernels
#endif
