// The StepPlan: one training step as data. The ordered list of kernels (named as in llm.c), each with its shapes and
// its analytic FLOPs and bytes. Both backends execute the entries in this order; timing tables derive GFLOP/s and
// GB/s from these figures in one place (core/metrics).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/op.hpp"

namespace core {

// The kernels a step runs, by name (core/op.hpp); each one's shapes and formula are in its src/cpu/ops/<kernel>.cpp.
// In a training step: gather_batch, matmul_forward per layer, softmax_xent_forward_backward, loss_reduce, then per
// layer from the last act_backward, matmul_backward_weight, bias_backward, matmul_backward_data, and the update
// (adamw_update | sgd_update); fp16 adds check_finite_grads before it and update_loss_scale after it (dynamic loss
// scaling, core/loss_scaler.hpp); --unfused adds bias_add and act_forward after each matmul_forward.

const char* kernel_name(Op op);  // "matmul_forward", ... : the same name as the shader, the CPU function, the table row

// What a plan entry does: dispatch a kernel, or copy data between host and device (PlanEntry::transfer()).
enum class EntryKind { Kernel, Transfer };

struct PlanEntry {
  Op op;
  int layer = -1;      // model layer, -1 where the kernel is not per layer
  bool activation = false;  // MatmulForward: apply the activation (hidden layers) and keep preact
  bool epilogue = true;     // MatmulForward: add the bias (and the activation) in the GEMM; false: --unfused
  long B = 0;          // rows (batch size)
  long C = 0;          // input features / K classes for softmax
  long OC = 0;         // output features
  size_t N = 0;        // elements, for element-wise kernels (act_backward, updates); softmax_xent_forward_backward
                       // and loss_reduce: the rows whose targets count (0: all B)
  // Convolutions and pooling (NHWC activations, shaders/common/kernel_params.h): B images of H x W pixels, C input
  // channels, OC output channels (pooling: OC = C); conv2d: a KS x KS kernel, stride 1, zero padding `pad`.
  long H = 0, W = 0;
  int KS = 0, pad = 0;
  // A per-pixel kernel of a convolutional layer (bias_add, act_forward, act_backward, bias_backward over its output):
  // the pixels per sample (OH x OW), B then counting pixel rows (samples x pixels); 1 elsewhere.
  long pixels = 1;
  // Attention (the transformer): B sequences of T positions, `heads` heads of C / heads features each (C the width).
  long T = 0;
  int heads = 0;
  // embedding_backward: add into the token embeddings' gradient (tied to the output projection, whose backward wrote
  // it first) instead of overwriting it. (The embeddings' vocabulary is the entry's OC.)
  bool accumulate = false;
  long OH() const { return op_is_pool() ? H / 2 : H + 2 * pad - KS + 1; }  // the output's height and width
  long OW() const { return op_is_pool() ? W / 2 : W + 2 * pad - KS + 1; }
  bool op_is_pool() const { return op == Op::max_pool_forward || op == Op::max_pool_backward; }
  double flops = 0;         // analytic floating-point operations (multiply-add = 2)
  double bytes_read = 0;    // compulsory traffic: each tensor read once
  double bytes_written = 0; // each tensor written once
  // GPU only (gpu/gemm_config.hpp, choose_split_k): matmul_backward_weight's K (the batch) cut into split_k slices of
  // k_slice() rows, each summed by its own workgroups into an fp32 partial product (split_k x OC x C), then a second
  // pass adds the partials in slice order and rounds once to the storage type. 1: one GEMM over all of K (the CPU's
  // plan always). The figures count the partials' traffic and the reduce's additions (kernel_table.cpp).
  // conv2d_backward_weight the same way over its K = B*OH*OW pixels, in slices of k_slice() whole images (its
  // partials split_k x OC x KS*KS*C; its figures do not count them yet).
  uint32_t split_k = 1;
  // A kernel, or a transfer: gather_batch under --input host (use_host_upload), where the batch arrives by a
  // host-to-device copy of what the host loader assembled, named upload_batch in tables, traces and the timeline,
  // timed as a copy and never counted as the device's compute (busy share, kernel time).
  EntryKind kind = EntryKind::Kernel;
  bool transfer() const { return kind == EntryKind::Transfer; }
  // Rows of the batch per slice: B / split_k rounded up to a multiple of kSplitKAlign (the convolution: images,
  // ceil(B / split_k), as its shader computes them).
  long k_slice() const;

  const char* kernel() const { return transfer() ? kUploadBatch : kernel_name(op); }
  static constexpr const char* kUploadBatch = "upload_batch";
  // A kernel of the forward pass through the layers (matmul_forward, and bias_add, act_forward when unfused): what
  // evaluation runs on each batch of the test set.
  bool layer_forward() const {
    return op == Op::matmul_forward || op == Op::bias_add || op == Op::act_forward || op == Op::conv2d_forward ||
           op == Op::max_pool_forward;
  }
  // The same entry on `rows` samples of the batch (evaluation's last, partial batch): B (pixel rows for per-pixel
  // kernels), and N of act_forward.
  PlanEntry with_rows(long rows) const {
    PlanEntry e = *this;
    e.B = rows * pixels;
    if (op == Op::act_forward) e.N = static_cast<size_t>(e.B * OC);
    return e;
  }
  std::string label() const;  // "matmul_forward L2 (128x256 · 128x256ᵀ)" for tooltips and traces
  double bytes() const { return bytes_read + bytes_written; }
  double arithmetic_intensity() const { return bytes() > 0 ? flops / bytes() : 0; }  // FLOP/byte, for the roofline
};

// Split-K slices start at multiples of this many rows (every GEMM tiling's k step divides it), so that a slice
// begins where a whole k-step or 4-wide texel begins.
constexpr long kSplitKAlign = 16;

// e's analytic figures (flops, bytes_read, bytes_written) from its kernel's formulas in `precision`'s storage type.
void set_figures(PlanEntry& e, Precision precision);

// Entry e of a kernel that may run split-K (its record's gemm.split_k: matmul_backward_weight, conv2d_backward_weight)
// with its K cut into at most `slices` slices of k_slice() rows (images; the last may be shorter, none is empty:
// split_k becomes ceil(B / k_slice)), its figures re-derived; slices <= 1, or a K too short for two slices, gives
// split_k = 1. Other kernels are returned unchanged.
PlanEntry with_split_k(const PlanEntry& e, uint32_t slices, Precision precision);

// The elements of one slice's partial product of a split entry: its output (binding 0 of its kernel), dweight:
// OC x C (matmul_backward_weight), OC x KS x KS x C (conv2d_backward_weight).
size_t split_output_elements(const PlanEntry& e);

// The split_k_reduce that follows split entry e (e.split_k > 1): N = split_output_elements(e) outputs, each the sum of
// e.split_k partial products; its figures in `precision`.
PlanEntry split_k_reduce_entry(const PlanEntry& e, Precision precision);

struct StepPlan {
  ModelShape shape;
  int batch = 0;
  Activation activation = Activation::ReLU;
  Optimizer optimizer = Optimizer::AdamW;
  Precision precision = Precision::FP32;
  bool unfused = false;          // bias add and activation as kernels of their own (--unfused)
  bool naive_attention = false;  // a transformer's attention as the naive kernels, the scores in memory (--attention)
  size_t bytes_per_element = 4;  // bytes of a stored tensor element: storage_bytes(precision)
  bool loss_scaling() const { return precision == Precision::FP16; }
  std::vector<PlanEntry> entries;

  double total_flops() const;
  double total_bytes() const;
};

// --input host: the plan's gather_batch entry becomes the upload of the host's batch (EntryKind::Transfer), with
// the figures of a transfer: no FLOPs, bytes_read = the bytes copied host to device (core::batch_upload_bytes:
// B x C0 x the storage type's bytes, plus B int32 labels; each byte crosses once), bytes_written 0.
void use_host_upload(StepPlan& plan);

// The plan of one training step of `shape` at batch size `batch`:
//   gather_batch; matmul_forward per layer; softmax_xent_forward_backward; loss_reduce;
//   per layer from the last: [act_backward], matmul_backward_weight, bias_backward, [matmul_backward_data];
//   [check_finite_grads]; adamw_update | sgd_update over the flat parameter buffer; [update_loss_scale].
// precision: the storage type of activations, weights as read and gradients (the byte counts follow it); fp16 adds the
// two loss-scaling entries. The optimizer's master weights and state are fp32 in every precision.
// unfused (--unfused): each matmul_forward is the plain GEMM (no epilogue), followed by bias_add and, in hidden
// layers, act_forward: the same math in fp32 (the same roundings, so bit-identical losses), with more launches and
// every (B,OC) output read and written again; in 16-bit the GEMM's sums are rounded to storage before the bias.
// naive_attention (--attention naive; a transformer's only): each attention layer as the naive kernels (scores,
// softmax, values; dv, dscores, dq, dk), its (B, heads, T, T) scores in memory, instead of the fused ones: the same
// math, rounded differently.
StepPlan build_step_plan(const ModelShape& shape, int batch, Activation act, Optimizer opt,
                         Precision precision = Precision::FP32, bool unfused = false, bool naive_attention = false);

// The passes a trainer runs besides training steps, on `rows` samples at a time, as plan entries both trainers run
// the same way: gather_batch of the rows, the forward kernels of `plan`'s layers (matmul_forward, and bias_add /
// act_forward when unfused); then, for Evaluation, softmax_xent_forward_backward without a gradient (per-sample
// losses and correct flags at StepArgs::out_offset); for Prediction, argmax (each row's class, into predictions). The
// step's settings give the rows' position (StepArgs::first) and evaluation = true.
enum class Pass { Evaluation, Prediction };
std::vector<PlanEntry> forward_pass(const StepPlan& plan, long rows, Pass pass);

// A transformer's (ModelShape::transformer): the forward pass of B sequences (gather_tokens, then each layer's
// kernel: embedding_forward, per block layernorm_forward, matmul_forward (q, k, v), attention_forward_fused (naive:
// attention_naive_scores, attention_naive_softmax, attention_naive_values),
// matmul_forward, residual_forward, layernorm_forward, matmul_forward (GELU), matmul_forward, residual_forward; then
// layernorm_forward and the output projection's matmul_forward without bias); and the rest of its training step
// after it: softmax_xent_forward_backward over every position (its mean over the positions that count: N), loss_reduce,
// each layer's backward from the last (the LayerNorms' adding into the residual stream's gradient; the attention's
// attention_backward_dq and _dkv, naive: attention_naive_dv, _dscores, _dq, _dk), and embedding_backward.
// build_step_plan adds the optimizer's update.
std::vector<PlanEntry> transformer_forward(const ModelShape& shape, long B, bool naive_attention);
void add_transformer_steps(StepPlan& plan, const std::function<void(PlanEntry)>& add);

// The compulsory bytes a training step's attention kernels move (their entries' bytes_read + bytes_written), in each
// form: the plan's own and the other form's plan (same model, batch and precision): what fusion saves per step
// (issue 35). {0, 0} for a model without attention.
struct AttentionTraffic {
  double fused = 0, naive = 0;
};
AttentionTraffic attention_traffic(const StepPlan& plan);

}  // namespace core
