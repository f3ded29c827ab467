// attention_naive_dv: the naive attention's first backward kernel, by key (before attention_naive_dscores turns the
// probabilities in memory into the scores' gradient):
//   dv_u = sum over t >= u of att[b, h, t, u] dy_t, into the v columns of dqkv (B*T, 3C; the q and k columns kept)
// A plan entry's B is the sequences, T their length, C the width, heads the heads.
#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_naive_dv(attention_shape(a.as<core::AttentionParams>()), b.f32(1), b.f32(2), b.f32(0), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_naive_dv_reference(attention_shape(a.as<core::AttentionParams>()), b[1], b[2], b[0]);
}

}  // namespace

const Kernel attention_naive_dv{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef attention_naive_dv{
    .bindings = {{.name = "dqkv", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::DLayerIn, .sum = true, .elements = shape::qkv},
                 {.name = "att", .access = Access::Read, .elem = Elem::Storage, .role = Role::AttnScores, .elements = shape::attn_matrix},
                 {.name = "dy", .access = Access::Read, .elem = Elem::Storage, .role = Role::DAct, .elements = shape::seq_x_C}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Elements,
    .local_size = 256,
    // grid-stride over the B*T x C values, one invocation each
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{shape::seq_x_C(e, {}), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: D multiply-adds
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * 2.0 * double(e.C) / e.heads; },
    // compulsory: the matrix and dy once, dv once
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(attn_matrix(e) + shape::seq_x_C(e, {})) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(shape::seq_x_C(e, {})) * e_of(p); }};

}  // namespace kernels
#endif
