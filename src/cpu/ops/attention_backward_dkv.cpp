// attention_backward_dkv: the fused attention's backward, its second pass, by key row (FlashAttention-2, Dao 2023;
// after attention_backward_dq, whose delta it reads). The probabilities are recomputed tile by tile from the
// forward's log-sum-exp, never read from memory:
//   dk_u = sum over t >= u of P(t, u) (dy_t . v_u - delta_t) q_t / sqrt(D),  P(t, u) = exp(q_t . k_u / sqrt(D) - lse_t)
//   dv_u = sum over t >= u of P(t, u) dy_t
//   written into the k and v columns of dqkv (B*T, 3C); its q columns are attention_backward_dq's
// A plan entry's B is the sequences, T their length, C the width, heads the heads (D = C / heads <= 64).
#include <cmath>

#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_backward_dkv(attention_shape(a.as<core::AttentionParams>()), b.f32(1), b.f32(2), b.f32(3), b.f32(4), b.f32(0),
                              pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_backward_dkv_reference(attention_shape(a.as<core::AttentionParams>()), b[1], b[2], b[3], b[4], b[0]);
}

}  // namespace

const Kernel attention_backward_dkv{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

// dqkv is read-write: each of the two kernels writes its own columns and keeps the other's (a 16-bit CPU run
// widens it whole and rounds it back whole).
const core::KernelDef attention_backward_dkv{
    .bindings = {{.name = "dqkv",
                  .access = Access::ReadWrite,
                  .elem = Elem::Storage,
                  .role = Role::DLayerIn,
                  .sum = true,
                  .elements = shape::qkv},
                 {.name = "qkv",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::qkv},
                 {.name = "lse",
                  .access = Access::Read,
                  .elem = Elem::F32,
                  .role = Role::AttnLse,
                  .elements = shape::attn_stats},
                 {.name = "delta",
                  .access = Access::Read,
                  .elem = Elem::F32,
                  .role = Role::AttnDelta,
                  .elements = shape::attn_stats},
                 {.name = "dy",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DAct,
                  .elements = shape::seq_x_C}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Rows,
    .local_size = kAttentionTile,
    // One invocation per key row, each head's rows rounded up to whole workgroups of 32.
    .grid_size = attention_rows,
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: the score's, dP's, dk's and dv's D multiply-adds, the exp, dS
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * (8.0 * double(e.C) / e.heads + 5); },
    // compulsory: q, k, v and dy once each, the log-sum-exp and delta; never the probabilities
    .bytes_read =
        [](const PlanEntry& e, Precision p) {
          return double(4 * shape::seq_x_C(e, {})) * e_of(p) + 8.0 * shape::attn_stats(e, {});
        },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(2 * shape::seq_x_C(e, {})) * e_of(p); }};

}  // namespace kernels
#endif
