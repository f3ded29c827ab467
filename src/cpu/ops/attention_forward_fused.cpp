// attention_forward_fused: causal multi-head self-attention without the scores in memory (Milne & Gimelshein 2018;
// Dao et al. 2022, FlashAttention): tiles of keys against tiles of queries, an online softmax per query row.
//   y (B*T, C) = softmax(q k^T / sqrt(D), causal) v per head;  lse (B, H, T) = each row's log-sum-exp of its scores
//   qkv (B*T, 3C): q, k, v side by side, head h at features h*D..h*D+D-1 of each; C = heads * D, D <= 64
// A plan entry's B is the sequences, T their length, C the width, heads the heads.
#include <cmath>
#include <vector>

#include "cpu/attention.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  cpu::attention_forward_fused(attention_shape(a.as<core::AttentionParams>()), b.f32(2), b.f32(0), b.f32(1), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const AttentionShape s = attention_shape(a.as<core::AttentionParams>());
  std::vector<double> att(size_t(s.B) * size_t(s.H) * size_t(s.T) * size_t(s.T));  // the naive form's: not an output
  attention_reference(s, b[2], b[0], att, b[1]);
}

}  // namespace

const Kernel attention_forward_fused{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef attention_forward_fused{
    .bindings = {{.name = "y",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::Act,
                  .elements = shape::seq_x_C},
                 {.name = "lse",
                  .access = Access::Write,
                  .elem = Elem::F32,
                  .role = Role::AttnLse,
                  .elements = shape::attn_stats},
                 {.name = "qkv",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::LayerIn,
                  .elements = shape::qkv}},
    .params_bytes = sizeof(core::AttentionParams),
    .grid = Grid::Rows,
    .local_size = kAttentionTile,
    // One invocation per query row, each head's rows rounded up to whole workgroups of 32.
    .grid_size = attention_rows,
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(attention_params(e)); },
    // per (query, key at or before it) pair: the score's D multiply-adds, the exp and sum, the output's D
    .flops = [](const PlanEntry& e, Precision) { return attention_pairs(e) * (4.0 * double(e.C) / e.heads + 4); },
    // compulsory: q, k and v once, y once, and the log-sum-exp; never the scores
    .bytes_read = [](const PlanEntry& e, Precision p) { return double(e.B * e.T * 3 * e.C) * e_of(p); },
    .bytes_written =
        [](const PlanEntry& e, Precision p) {
          return double(e.B * e.T * e.C) * e_of(p) + 4.0 * double(e.B) * e.heads * double(e.T);
        }};

}  // namespace kernels
#endif
