// Causal multi-head self-attention on the CPU in fp32, two ways (issue 35's teaching toggle, --attention):
//   - naive: the scores of every head materialized, (B, H, T, T), then softmax, then times V; the backward reads the
//     stored probabilities. Memory and traffic grow with T^2.
//   - fused: tiled with an online softmax (Milne & Gimelshein 2018, "Online normalizer calculation for softmax"; Dao
//     et al. 2022, FlashAttention; its backward as FlashAttention-2, Dao 2023): a block of queries against a block of
//     keys at a time, in arrays that stay in the L1/L2 cache, keeping only each row's log-sum-exp (B, H, T); the
//     backward recomputes the probabilities block by block from it. Nothing of size T^2 is ever stored.
// Both split the work by (sequence, head, block of rows), each piece summed in a fixed order by one thread, so that
// results are bit-identical on any number of threads. Their products run on the GEMM's micro-kernels
// (cpu/attention_tile.hpp; cpu/attention_fused.cpp, cpu/attention_naive.cpp). The double reference of both is
// cpu::attention_reference (cpu/transformer_reference.hpp), whose layout they share: qkv (B*T, 3C) with q, k, v side
// by side and head h at features h*D..h*D+D-1 of each (C = H*D), y and dy (B*T, C).
#pragma once
#include "kernel_params.h"  // shaders/common: AttentionParams
#include "cpu/thread_pool.hpp"
#include "cpu/transformer_reference.hpp"

namespace cpu {

// The shape an attention kernel's push constants give (its CPU twin and reference, cpu/ops/attention_*.cpp).
inline AttentionShape attention_shape(const core::AttentionParams& p) {
  return {int(p.B), int(p.T), int(p.H), int(p.D)};
}

// The fused kernels' tiles: queries per block and keys per block. A 64 x 64 fp32 tile of scores is 16 KiB; the
// backward keeps two (P and dS) and the packed blocks of q, k, v and dy (8 KiB each at D = 32): an L1 and a half,
// well inside the L2. 64 queries rather than 32 halve how often each key block is packed (cpu/attention_fused.cpp).
inline constexpr int kAttentionQueryBlock = 64;
inline constexpr int kAttentionKeyBlock = 64;

// The naive form (cpu/attention_naive.cpp), one function per kernel of the plan, in the order a step runs them.
// att (B, H, T, T): row t of head h of sequence b at ((b H + h) T + t) T; every kernel that writes it writes 0 after
// the diagonal (u > t). Forward:
//   attention_naive_scores:  att = q k^T / sqrt(D) (causal);
//   attention_naive_softmax: att = softmax of each row's first t + 1 entries, in place: the probabilities P;
//   attention_naive_values:  y (B*T, C) = P v.
// Backward, from dy (B*T, C), each into its own columns of dqkv (B*T, 3C; the others kept):
//   attention_naive_dv:      dv_u = sum over t >= u of P(t, u) dy_t (reads P: it runs first);
//   attention_naive_dscores: att = dS, in place: dS(t, u) = P(t, u) (dy_t . v_u - dy_t . y_t) / sqrt(D) (the softmax's
//                            backward; sum over u of P(t, u) dy_t . v_u = dy_t . y_t);
//   attention_naive_dq:      dq_t = sum over u <= t of dS(t, u) k_u;
//   attention_naive_dk:      dk_u = sum over t >= u of dS(t, u) q_t.
void attention_naive_scores(const AttentionShape& s, const float* qkv, float* att, ThreadPool& pool);
void attention_naive_softmax(const AttentionShape& s, float* att, ThreadPool& pool);
void attention_naive_values(const AttentionShape& s, const float* att, const float* qkv, float* y, ThreadPool& pool);
void attention_naive_dv(const AttentionShape& s, const float* att, const float* dy, float* dqkv, ThreadPool& pool);
void attention_naive_dscores(const AttentionShape& s, const float* qkv, const float* y, const float* dy, float* att,
                             ThreadPool& pool);
void attention_naive_dq(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool);
void attention_naive_dk(const AttentionShape& s, const float* att, const float* qkv, float* dqkv, ThreadPool& pool);

// y as above, and lse (B, H, T): each row's log of the sum of exp(score) over its positions, for the backward.
void attention_forward_fused(const AttentionShape& s, const float* qkv, float* y, float* lse, ThreadPool& pool);
// dqkv (overwritten) from dy, the forward's y and lse, in one pass per (sequence, head): the probabilities recomputed
// per tile as exp(score - lse), dq, dk and dv summed together (one thread owns a head, so no two write the same row).
// Plain loops per head, kept as a reference for the two passes below: those were 1.5x slower than it (they recompute
// the probabilities twice) until they ran on the GEMM micro-kernels; now it takes 2.4-3.1x their time (1 thread, CPU
// time: 24.7 against 10.1 ms at B 16, T 256, 2 heads of 32; 188 against 61 ms at B 4, T 1024, 4 heads of 32).
void attention_backward_fused(const AttentionShape& s, const float* qkv, const float* y, const float* lse,
                              const float* dy, float* dqkv, ThreadPool& pool);
// The fused backward in two passes, as the GPU runs it (no atomics; every output summed in a fixed order), each
// recomputing the probabilities tile by tile from the forward's log-sum-exp, P = exp(q.k / sqrt(D) - lse)
// (FlashAttention-2, Dao 2023: dS = P (dP - D), dP = dy v^T, D = rowsum(dy * y)):
//   attention_backward_dq: by query, the q columns of dqkv (overwritten) and delta (B, H, T): each query row's D;
//   attention_backward_dkv: by key, the k and v columns of dqkv (overwritten), from attention_backward_dq's delta.
void attention_backward_dq(const AttentionShape& s, const float* qkv, const float* y, const float* lse,
                           const float* dy, float* dqkv, float* delta, ThreadPool& pool);
void attention_backward_dkv(const AttentionShape& s, const float* qkv, const float* lse, const float* delta,
                            const float* dy, float* dqkv, ThreadPool& pool);

}  // namespace cpu
