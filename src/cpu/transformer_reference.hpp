// The transformer's whole-step reference in double (issue 35): a small decoder-only transformer, forward and backward
// written out as the plain loops of the math, the oracle its kernels on both backends will be compared with, as
// train_step.cpp is the MLP's and the CNN's. The shape is GPT-2's (Radford et al. 2019, "Language Models are
// Unsupervised Multitask Learners"): token and position embeddings; L blocks of pre-LayerNorm causal multi-head
// self-attention and a GELU MLP (4x the width), each added back to the residual stream; a final LayerNorm; an output
// projection onto the vocabulary, tied to the token embedding or its own; the mean cross-entropy of the next token
// over the masked positions. LayerNorm as torch.nn.LayerNorm (biased variance, eps 1e-5; Ba et al. 2016); attention
// softmax(q k^T / sqrt(d)) v with the future masked (Vaswani et al. 2017); GELU with the tanh approximation, as the
// MLP's (cpu::ops::ref_activation).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/text_data.hpp"

namespace cpu {

struct TransformerShape {
  int vocab = 0;    // V: token ids 0..V-1
  int context = 0;  // T: the longest sequence (position embeddings)
  int embed = 0;    // C: the residual stream's width
  int heads = 0;    // H: C / H features per head
  int layers = 0;   // L blocks
  bool tied = true;  // the output projection is the token embedding (GPT-2), or a (V, C) matrix of its own
  int head_size() const { return embed / heads; }
  int mlp() const { return 4 * embed; }
};

// Where each parameter tensor starts in the flat parameter vector; weights (out, in) row-major as torch.nn.Linear.
struct TransformerParams {
  struct Block {
    size_t ln1_g, ln1_b;    // (C), (C)
    size_t qkv_w, qkv_b;    // (3C, C), (3C): q, k, v one after the other, head h at features h*D..h*D+D-1 of each
    size_t proj_w, proj_b;  // (C, C), (C)
    size_t ln2_g, ln2_b;    // (C), (C)
    size_t fc_w, fc_b;      // (4C, C), (4C)
    size_t out_w, out_b;    // (C, 4C), (C)
  };
  size_t wte = 0, wpe = 0;  // (V, C), (T, C)
  std::vector<Block> blocks;
  size_t lnf_g = 0, lnf_b = 0;  // (C), (C)
  size_t head = 0;              // (V, C): wte when tied
  size_t count = 0;             // every parameter
};

// The layout of `s`'s parameters. Throws core::Error(InvalidArgument) for a size below 1 or C not a multiple of H.
TransformerParams transformer_params(const TransformerShape& s);

// GPT-2's initialisation, drawn from `seed` (core::Pcg32, Box-Muller normals): weights N(0, 0.02^2), the two
// projections back into the residual stream N(0, (0.02 / sqrt(2L))^2), biases 0, LayerNorm gains 1 and shifts 0.
std::vector<double> transformer_init(const TransformerShape& s, uint64_t seed);

struct TransformerResult {
  double loss = 0;               // mean cross-entropy over the masked positions of the batch
  std::vector<double> logits;    // (B, T, V)
  std::vector<double> grads;     // d loss / d params, the layout of transformer_params (empty without backward)
};

// LayerNorm of `rows` rows of C features (torch.nn.LayerNorm, Ba et al. 2016): out = (x - mean) rstd g + b with the
// biased variance and rstd = 1 / sqrt(var + eps) (torch: 1e-5); each row's mean and rstd kept for the backward. The
// reference of the layernorm kernels (src/cpu/ops/layernorm_*.cpp) and of the transformer's whole step.
void layer_norm_reference(int rows, int C, double eps, std::span<const double> x, std::span<const double> g,
                          std::span<const double> b, std::span<double> out, std::span<double> mean,
                          std::span<double> rstd);
// Its backward: with xhat = (x - mean) rstd and dxhat = dout g, dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat
// xhat)) (overwritten); dg += the sum over rows of dout xhat, db += the sum of dout.
void layer_norm_backward_reference(int rows, int C, std::span<const double> x, std::span<const double> g,
                                   std::span<const double> mean, std::span<const double> rstd,
                                   std::span<const double> dout, std::span<double> dx, std::span<double> dg,
                                   std::span<double> db);

// Causal multi-head attention of B sequences of T positions, H heads of D features: the reference of the attention
// kernels. qkv (B*T, 3C) as the qkv projection writes it (q, k, v side by side, head h at features h*D..h*D+D-1 of
// each; C = H*D); y (B*T, C); att (B, H, T, T): row t the softmax of q_t k_u / sqrt(D) over u <= t, 0 after it.
struct AttentionShape {
  int B = 0, T = 0, H = 0, D = 0;
  int C() const { return H * D; }
};
// lse (B, H, T), where not empty: each row's log of the sum of exp(score) over its positions (the fused kernels keep
// it for their backward).
void attention_reference(const AttentionShape& s, std::span<const double> qkv, std::span<double> y,
                         std::span<double> att, std::span<double> lse = {});
// Its backward: dqkv (B*T, 3C, overwritten) from dy (B*T, C) and the forward's att. dv_u = sum_t att[t][u] dy_t;
// the softmax's dscore = att (datt - sum att datt) with datt[t][u] = dy_t . v_u; dq_t = sum_u dscore k_u / sqrt(D),
// dk_u = sum_t dscore q_t / sqrt(D).
void attention_backward_reference(const AttentionShape& s, std::span<const double> qkv, std::span<const double> att,
                                  std::span<const double> dy, std::span<double> dqkv);
// The fused backward's two kernels in double, from the forward's y and log-sum-exp lse (B, H, T) instead of the
// stored probabilities: P(t, u) = exp(q_t . k_u / sqrt(D) - lse_t), dS = P (dy_t . v_u - delta_t) / sqrt(D)
// (FlashAttention-2, Dao 2023). With the forward's y and lse they give attention_backward_reference's gradients.
//   dq_reference: delta (B, H, T) = each query row's dy_t . y_t, and the q columns of dqkv (the rest untouched);
//   dkv_reference: the k and v columns of dqkv (the rest untouched), from the given delta.
void attention_backward_dq_reference(const AttentionShape& s, std::span<const double> qkv,
                                     std::span<const double> y, std::span<const double> lse,
                                     std::span<const double> dy, std::span<double> dqkv, std::span<double> delta);
void attention_backward_dkv_reference(const AttentionShape& s, std::span<const double> qkv,
                                      std::span<const double> lse, std::span<const double> delta,
                                      std::span<const double> dy, std::span<double> dqkv);

// The naive attention's seven kernels in double (cpu/attention.hpp says what each computes), on att (B, H, T, T) as
// attention_reference lays it out (0 after the diagonal, which each writes). dscores takes sum over u of P dP as
// dy_t . y_t (as the kernel does, from the forward's y); chained on the forward's outputs they give
// attention_reference's y and att, and attention_backward_reference's gradients.
void attention_naive_scores_reference(const AttentionShape& s, std::span<const double> qkv, std::span<double> att);
void attention_naive_softmax_reference(const AttentionShape& s, std::span<double> att);
void attention_naive_values_reference(const AttentionShape& s, std::span<const double> att,
                                      std::span<const double> qkv, std::span<double> y);
void attention_naive_dv_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> dy,
                                  std::span<double> dqkv);
void attention_naive_dscores_reference(const AttentionShape& s, std::span<const double> qkv,
                                       std::span<const double> y, std::span<const double> dy, std::span<double> att);
void attention_naive_dq_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> qkv,
                                  std::span<double> dqkv);
void attention_naive_dk_reference(const AttentionShape& s, std::span<const double> att, std::span<const double> qkv,
                                  std::span<double> dqkv);

// One step's forward pass on `batch` (B sequences of batch.T <= context tokens), and its backward pass when
// `backward`. Throws core::Error(InvalidArgument) for a token outside 0..V-1, a sequence longer than the context, a
// parameter vector of another size, or a batch without a masked position.
TransformerResult transformer_step_reference(const TransformerShape& s, std::span<const double> params,
                                             const core::TokenBatch& batch, bool backward);

}  // namespace cpu
