// attention_naive_scores: the naive attention's first kernel (issue 35's teaching toggle, --attention naive): every
// head's causal scores written to memory, the (B, H, T, T) matrix that the fused kernel never stores:
//   att[b, h, t, u] = q_t . k_u / sqrt(D) for u <= t, 0 after the diagonal
//   qkv (B*T, 3C): q, k, v side by side, head h at features h*D..h*D+D-1 of each; C = heads * D
// A plan entry's B is the sequences, T their length, C the width, heads the heads.
#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_naive_scores(attention_shape(a.as<core::AttentionParams>()), b.f32(1), b.f32(0), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_naive_scores_reference(attention_shape(a.as<core::AttentionParams>()), b[1], b[0]);
}

}  // namespace

const Kernel attention_naive_scores{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef attention_naive_scores{
    .bindings = {{.name = "att", .access = Access::Write, .elem = Elem::Storage, .role = Role::AttnScores, .elements = shape::attn_matrix},
                 {.name = "qkv", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn, .elements = shape::qkv}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Elements,
    .local_size = 256,
    // grid-stride over every entry of the matrix, one invocation each
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{attn_matrix(e), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: the D multiply-adds of the score and its scaling
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * (2.0 * double(e.C) / e.heads + 1); },
    // compulsory: q and k once; the whole matrix written (its zeros too)
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(2 * shape::seq_x_C(e, {})) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e)) * e_of(p); }};

}  // namespace kernels
#endif
