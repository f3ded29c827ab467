// attention_backward_dq: the fused attention's backward, its first pass, by query row (FlashAttention-2, Dao 2023;
// no atomics: attention_backward_dkv, by key, makes dk and dv). The probabilities are recomputed tile by tile from
// the forward's log-sum-exp, never read from memory:
//   delta (B, H, T) = dy_t . y_t per query row (FlashAttention-2's D)
//   dq_t = sum over u <= t of P(t, u) (dy_t . v_u - delta_t) k_u / sqrt(D),  P(t, u) = exp(q_t . k_u / sqrt(D) - lse_t)
//   written into the q columns of dqkv (B*T, 3C); its k and v columns are the next kernel's
// A plan entry's B is the sequences, T their length, C the width, heads the heads (D = C / heads <= 64).
#include <cmath>

#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_backward_dq(attention_shape(a.as<core::AttentionParams>()), b.f32(2), b.f32(3), b.f32(4), b.f32(5), b.f32(0),
                             b.f32(1), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  attention_backward_dq_reference(attention_shape(a.as<core::AttentionParams>()), b[2], b[3], b[4], b[5], b[0], b[1]);
}

}  // namespace

const Kernel attention_backward_dq{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

// dqkv is read-write: each of the two kernels writes its own columns and keeps the other's (a 16-bit CPU run
// widens it whole and rounds it back whole).
const core::KernelDef attention_backward_dq{
    .bindings = {{.name = "dqkv",
                  .access = Access::ReadWrite,
                  .elem = Elem::Storage,
                  .role = Role::DLayerIn,
                  .sum = true,
                  .elements = shape::qkv},
                 {.name = "delta",
                  .access = Access::Write,
                  .elem = Elem::F32,
                  .role = Role::AttnDelta,
                  .sum = true,
                  .elements = shape::attn_stats},
                 {.name = "qkv",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::qkv},
                 {.name = "y",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::Act,
                  .elements = shape::seq_x_C},
                 {.name = "lse",
                  .access = Access::Read,
                  .elem = Elem::F32,
                  .role = Role::AttnLse,
                  .elements = shape::attn_stats},
                 {.name = "dy",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DAct,
                  .elements = shape::seq_x_C}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Rows,
    .local_size = kAttentionTile,
    // One invocation per query row, each head's rows rounded up to whole workgroups of 32.
    .grid_size = attention_rows,
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: the score's and dP's D multiply-adds each, dq's D, the exp and
    // dS; per query row delta's D
    .flops =
        [](const PlanEntry& e, Precision) {
          return attention_pairs(e) * (6.0 * double(e.C) / e.heads + 5) + 2.0 * shape::seq_x_C(e, {});
        },
    // compulsory: q, k, v, y and dy once each, the log-sum-exp; never the probabilities
    .bytes_read =
        [](const PlanEntry& e, Precision p) {
          return double(5 * shape::seq_x_C(e, {})) * e_of(p) + 4.0 * shape::attn_stats(e, {});
        },
    .bytes_written =
        [](const PlanEntry& e, Precision p) {
          return double(shape::seq_x_C(e, {})) * e_of(p) + 4.0 * shape::attn_stats(e, {});
        }};

}  // namespace kernels
#endif
