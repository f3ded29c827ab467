// attention_naive_dscores: the naive attention's softmax backward, in place over the matrix in memory:
//   att[b, h, t, u] = P(t, u) (dy_t . v_u - dy_t . y_t) / sqrt(D) for u <= t, 0 after the diagonal
// (the softmax's backward, dS = P (dP - sum over u of P dP), with that sum as dy_t . y_t since y_t = sum P v: as
// FlashAttention-2's D, Dao 2023). Reads the probabilities, leaves the scores' gradient dS for attention_naive_dq and
// attention_naive_dk. A plan entry's B is the sequences, T their length, C the width, heads the heads.
#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_naive_dscores(attention_shape(a.as<core::AttentionParams>()), b.f32(1), b.f32(2), b.f32(3), b.f32(0), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_naive_dscores_reference(attention_shape(a.as<core::AttentionParams>()), b[1], b[2], b[3], b[0]);
}

}  // namespace

const Kernel attention_naive_dscores{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef attention_naive_dscores{
    .bindings = {{.name = "att", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::AttnScores, .sum = true, .elements = shape::attn_matrix},
                 {.name = "qkv", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn, .elements = shape::qkv},
                 {.name = "y", .access = Access::Read, .elem = Elem::Storage, .role = Role::Act, .elements = shape::seq_x_C},
                 {.name = "dy", .access = Access::Read, .elem = Elem::Storage, .role = Role::DAct, .elements = shape::seq_x_C}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Elements,
    .local_size = 256,
    // grid-stride over the B * heads * T rows, one invocation per row
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{attn_rows(e), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: dP's D multiply-adds and dS; per row dy . y
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * (2.0 * double(e.C) / e.heads + 3) + 2.0 * shape::seq_x_C(e, {}); },
    // compulsory: the matrix read and written, v, y and dy once
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e) + 3 * shape::seq_x_C(e, {})) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e)) * e_of(p); }};

}  // namespace kernels
#endif
