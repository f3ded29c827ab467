// The kernel table: one entry per kernel, everything both backends and the tests need to know about it as data.
//   - its name (= shaders/<name>.comp = src/cpu/ops/<name>.cpp = core::Op::<name> = the timing-table row),
//   - its bindings in binding order: a name (as in the shader), whether the kernel reads or writes it, the element
//     type per precision, the variants it exists in, the role it plays in a training step (which tensor a trainer
//     binds to it) and its element count from the plan entry,
//   - its push-constant struct (shaders/common/kernel_params.h, shared by GLSL and C++) and how a plan entry and the
//     step's settings fill it,
//   - its workgroup geometry (what one invocation covers, the shader's local_size_x),
//   - its plan entry's analytic FLOP and byte formulas.
// Each entry is written with designated initializers in its kernel's file src/cpu/ops/<name>.cpp, beside the CPU twin
// and the plain reference in double, compiled into trainscope_kernels (archived into core) without them, and the table
// is assembled from those entries (core/kernel_table.cpp, from the generated kernel list): core has the table, no CPU
// code. gpu::Kernels makes the pipelines and dispatches
// from it, both trainers bind roles to their tensors and run any entry the same way, cpu::run_kernel / run_reference
// call the CPU twin and the reference found through it, and tests/test_kernel_parity.cpp runs every entry on every
// backend. How to add a kernel: docs/architecture.md, "Adding a kernel".
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernel_params.h"  // shaders/common: the params structs shared with GLSL
#include "core/config.hpp"
#include "core/loss_scaler.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"

namespace core {

// What one element of a binding holds.
enum class Elem : uint8_t {
  Storage,       // the precision's storage type: fp32, or fp16 / bf16 bits (2 bytes)
  F32,           // fp32 in every precision (master weights, optimizer state, losses, the dataset)
  I32,           // labels, correct flags
  U32,           // sample indices
  LossScaler,    // one LossScalerBuffer (fp16 only)
  ScaleHistory,  // one ScaleHistoryEntry per read-back slot (fp16 only)
};
size_t elem_bytes(Elem elem, Precision precision);
const char* to_string(Elem elem);

enum class Access : uint8_t { Read, Write, ReadWrite };

// The variants of a kernel a binding exists in. Optional bindings come last, SixteenBit before LossScaling, so that
// the bindings of every variant are numbered 0..n-1 as in the shader.
enum class When : uint8_t {
  Always,
  SixteenBit,   // fp16 and bf16 (e.g. the optimizers' 16-bit weights copy)
  LossScaling,  // fp16 only (the loss scaler's state)
};
bool present(When when, Precision precision);

// The tensor of a training step a binding takes. A trainer resolves each role to one of its buffers; `layer` is the
// plan entry's layer (l), and "the gradient of" means d loss / d (that tensor).
enum class Role : uint8_t {
  DataX, DataY,          // the dataset's samples (N, C0) fp32 and labels (N): training or test set
  Order,                 // the sample order of the epoch (training) or 0..N-1 (evaluation)
  XBatch, YBatch,        // the gathered batch: inputs (B, C0), labels (B)
  LayerIn,               // input of layer l: XBatch for l = 0, else Act of layer l-1
  Act,                   // output of layer l after its activation (B, OC); the logits for the last layer
  Preact,                // output of layer l before its activation (hidden layers only; the last layer has none)
  DAct,                  // the gradient of Act of layer l (what matmul_backward_data of layer l+1 writes)
  DPreact,               // the gradient of layer l's affine output: dlogits for the last layer, else act_backward's
  DLayerIn,              // the gradient of LayerIn of layer l (l >= 1): DAct of layer l-1
  Weight, Bias,          // layer l's parameters as the kernels read them (the 16-bit copy in 16-bit storage)
  DWeight, DBias,        // their gradients
  Logits, DLogits,       // Act and DPreact of the last layer
  Losses, Correct,       // per-sample cross-entropy (B) and argmax == label flags (B)
  Predictions,           // prediction: each row's class (B), the first maximum of its logits
  LossHistory,           // the read-back ring of mean losses, one per step slot
  Params, Grads,         // the flat fp32 master parameters and the flat gradients (ModelShape layout)
  State1, State2,        // AdamW m and v, or the SGD momentum buffer (State1)
  Weights16,             // the flat 16-bit weights copy the optimizers write (16-bit storage only)
  Scaler, ScaleHistory,  // fp16: the loss scaler's state, and its (scale, found_inf) per step slot
  NormMean, NormRstd,    // a LayerNorm's per-row mean and 1 / standard deviation, fp32 (kept for its backward)
  AttnLse,               // fused attention: each query row's log-sum-exp of its scores, fp32 (kept for its backward)
  AttnDelta,             // fused attention's backward: each query row's dy . y (FlashAttention-2's D), fp32
  AttnScores,            // naive attention: the scores (B, heads, T, T), then their probabilities, then (backward)
                         // the scores' gradient, in the storage type: what the fused kernels never store
  Tokens,                // a transformer's batch of token ids (B, T), int32
  TokenEmb,              // the token embeddings wte (V, C): a view into the parameters
  PosEmb,                // the position embeddings wpe (context, C): a view into the parameters
  DTokenEmb,             // their gradients: views into the gradients
  DPosEmb,
  Skip,                  // residual_forward's residual stream: the output of the layer the block branched from
  // Tensors of core::TensorLayout that no binding of the table names:
  SplitKPartials,        // the fp32 partial products of a split matmul_backward_weight (gpu::Kernels binds them)
  Placeholder,           // 16 bytes bound where a kernel binds a role without a tensor (the logits layer's preact)
  StagingX, StagingY,    // --input host, pinned: the staging ring of batches, inputs and labels
};
const char* to_string(Role role);

// What a step's kernels need besides their shapes: the run's settings and where the step is.
struct StepArgs {
  Activation activation = Activation::ReLU;
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0, momentum = 0.9f;
  long t = 1;              // the optimizer update this step makes, 1-based (fp16: the scaler's clock decides)
  uint32_t first = 0;      // the batch's first position in the epoch's order
  uint32_t slot = 0;       // the read-back slot of this step (loss history, scale history)
  LossScalerOptions scaler;
  bool evaluation = false;  // softmax: no dlogits, results at out_offset
  uint32_t out_offset = 0;
};

// The settings of a training step with `cfg`: the optimizer update t it makes (1-based; fp16's optimizers take t from
// the loss scaler's step clock instead), its batch at position `first` of the epoch's order, its read-back slot.
StepArgs step_args(const TrainConfig& cfg, long t, size_t first = 0, uint32_t slot = 0);

struct BindingDef {
  const char* name;  // as in the shader's block
  Access access;
  Elem elem;
  Role role;
  When when = When::Always;
  // Tests: the output is a sum over many terms (a GEMM, bias_backward), so a value that cancels to near zero carries
  // the rounding of its large terms: 16-bit comparisons add 1e-3 x max|reference| to their absolute tolerance.
  bool sum = false;
  // Tests: the output is one rounding of an exactly known value (a copy), so it must be bit for bit the nearest value.
  bool exact = false;
  // Its element count for a plan entry and the step's settings, 0 where this call does not touch it (matmul_forward's
  // preact without the activation, softmax's dlogits in evaluation); null where the entry does not give it (the
  // dataset, the read-back rings). Every Storage binding of a kernel without 16-bit code of its own has one: the
  // CPU widens and narrows 16-bit bindings from it (cpu/kernel_calls.hpp).
  size_t (*elements)(const PlanEntry& e, const StepArgs& s) = nullptr;
  bool writes() const { return access != Access::Read; }
};

// How the invocations of a dispatch cover its work (GPU), from the plan entry's shape. The memory-bound kernels read
// and write 4 elements at a time through a vec4 view of each binding (the shaders' *4 blocks), so a binding must start
// at a multiple of 16 bytes: the trainers bind whole buffers and parameter tensors at multiples of 256 bytes.
enum class Grid : uint8_t {
  Elements,  // grid-stride loop over size[0] work items (group count capped at 65535); 4-wide kernels: an item is
             // a group of four elements
  Rows,      // one invocation per row: size[0] rows, no loop
  Gemm,      // shared-memory tiles of the output, size = {M rows, N columns} (gemm.glsl, tiling gpu::GemmTiles)
  Conv,      // an implicit GEMM (the convolutions) over size = {M rows, N columns}, its operands gathered from the
             // images by index inside the shader; the variant and its tiles from gpu::gemm_variant (tiled or texel),
             // its tile rows folded into z past maxComputeWorkGroupCount[1] (gpu::fold_rows)
  Single,    // one workgroup
};

// A kernel's push-constant block as raw 32-bit words (the params struct of kernel_params.h), so that the trainers and
// the tests can pass it around without knowing the kernel; as<T>() gives the struct back.
struct KernelArgs {
  std::array<uint32_t, 32> words{};  // 128 bytes: maxPushConstantsSize guaranteed by every Vulkan device
  uint32_t bytes = 0;

  template <typename T>
  static KernelArgs of(const T& params) {
    static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= sizeof(words));
    KernelArgs a;
    std::memcpy(a.words.data(), &params, sizeof params);
    a.bytes = sizeof params;
    return a;
  }
  template <typename T>
  T as() const {  // throws core::Error(Internal) if this holds another struct's size
    check_size(sizeof(T));
    T params;
    std::memcpy(&params, words.data(), sizeof params);
    return params;
  }
  const void* data() const { return words.data(); }

 private:
  void check_size(size_t bytes) const;
};


// How a GEMM-shaped kernel (Grid::Gemm or Grid::Conv) may cut its K dimension into slices, each summed into an fp32
// partial product by its own workgroups along z, which split_k_reduce then adds in slice order (gpu/gemm_config.hpp,
// choose_split_k: where the output has too few tiles to fill the device).
enum class SplitK : uint8_t {
  None,    // never split
  Rows,    // K = the batch's rows, in slices of a multiple of kSplitKAlign rows (matmul_backward_weight)
  Images,  // K = B x OH x OW pixels, in slices of whole images (conv2d_backward_weight)
};

// What the GEMM family's machinery needs to know of one GEMM-shaped kernel, besides its bindings: whether it may run
// split-K, which two bindings hold its operands A and B (read through texel views on the texel path), when its
// operands allow 4-wide loads, and its largest operand (the texel path needs it within maxTexelBufferElements).
struct GemmTraits {
  SplitK split_k = SplitK::None;
  std::array<uint32_t, 2> operands{};                    // binding numbers of A and B
  bool (*vec4_ok)(const PlanEntry& e) = nullptr;          // the operands' contiguous dimensions are multiples of 4
  uint64_t (*largest_operand)(const PlanEntry& e) = nullptr;  // elements of its largest operand (output included)
  // The texel path's invocations along the output's rows (m) in local x, where the kernel's N is narrow (the
  // convolutions' channels) and its M long (their pixels); false: along the columns (n), as the GEMMs.
  bool texel_lanes_along_m = false;
};

struct KernelDef {
  Op op{};                           // set by the table from the kernel list
  const char* name = nullptr;        // likewise: the kernel's file name
  std::vector<BindingDef> bindings;  // binding order
  uint32_t params_bytes = 0;         // sizeof its params struct
  Grid grid = Grid::Single;
  uint32_t local_size = 1;           // the shader's local_size_x (Elements, Rows, Single); Gemm: from the tiling
  // Not a GEMM: the shared memory its shader declares, in floats per invocation (a tree reduction's partial sums), and
  // the fewest invocations per workgroup it works with (bias_backward: its row lanes).
  uint32_t shared_floats_per_invocation = 0;
  uint32_t min_local_size = 1;
  bool fp16_only = false;            // exists only with loss scaling (check_finite_grads, update_loss_scale)
  // Grid size from the entry's shape: {work items or rows, 1}, or {M, N} of a GEMM's output.
  std::array<uint64_t, 2> (*grid_size)(const PlanEntry& e) = nullptr;
  // The push constants of one dispatch of the entry.
  KernelArgs (*args)(const PlanEntry& e, const StepArgs& step) = nullptr;
  // Analytic figures of the StepPlan (step_plan.hpp's counting conventions), in the storage type of `precision`.
  double (*flops)(const PlanEntry& e, Precision precision) = nullptr;
  double (*bytes_read)(const PlanEntry& e, Precision precision) = nullptr;
  double (*bytes_written)(const PlanEntry& e, Precision precision) = nullptr;
  GemmTraits gemm{};                 // Grid::Gemm and Grid::Conv only

  bool gemm_shaped() const { return grid == Grid::Gemm || grid == Grid::Conv; }
  bool exists_in(Precision p) const { return !fp16_only || p == Precision::FP16; }
  // The bindings present in `precision`: the first n of `bindings` (optional ones come last).
  uint32_t binding_count(Precision precision) const;
};

// Every kernel, in core::Op order (core/kernel_table.cpp, from the kernel files' entries; checked once on first use:
// optional bindings last, params within 128 bytes, every formula present; cpu::kernel() checks what the CPU needs).
std::span<const KernelDef> kernel_table();
const KernelDef& kernel_def(Op op);

// The tests' tolerance per precision (CONVENTIONS.md's per-dtype defaults): per element |got - ref| <= atol + rtol |ref|
// with fp32 rtol 1.3e-6, atol 1e-5, and fp32 outputs also NMSE <= 1e-7; 16-bit storage rtol above half an ulp of the
// type (fp16 1e-3, bf16 1.6e-2), atol fp16's smallest normal (a device without shaderDenormPreserveFloat16 may
// flush subnormals) and bf16 fp32's 1e-5 (the arithmetic is fp32, so its absolute error carries over before the
// rounding), and at least 99% of the outputs the nearest 16-bit value of the reference (a device that truncates would
// match about half). The fp32 outputs of 16-bit kernels (losses, masters, state) take fp32's.
// Why the fp32 figures hold on any conformant driver (Vulkan spec, "Precision and Operation of SPIR-V Instructions";
// SPIR-V spec, the NoContraction decoration):
//   - add, subtract, multiply are correctly rounded (0.5 ulp = 6e-8 relative), a divide is within 2.5 ulp; without
//     NoContraction (GLSL `precise`) a compiler may fuse a multiply and an add into one fma, which changes where a
//     sum is rounded. A GEMM's sum of K products then differs from the double reference by up to K x 6e-8 x the sum
//     of |terms| in the worst case (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1): the tests mark
//     such outputs `sum` and add rtol x max|ref| to atol; typical errors (random signs) are sqrt(K) times smaller.
//   - exp(x) is within 3 + 2|x| ulp. softmax takes exp of (logit - max) in [-87, 0]: the absolute error of a term
//     e^d is at most (3 + 2|d|) e^d ulp(1) <= 3 ulp(1) = 3.6e-7 (largest at d = 0), so a row of 10 classes sums with
//     an error below 3.6e-6 against a sum >= 1, and log (absolute error < 2^-21 = 4.8e-7 in [0.5, 2], 3 ulp outside)
//     keeps the loss within 1e-5.
//   - tanh is inherited from sinh / cosh, i.e. from exp: below |u| = 9.1 (where the GELU's tanh saturates, see
//     shaders/common/activation.glsl) numerator and denominator carry up to 3 + 2 x 9.1 = 21 ulp each, so tanh is
//     within about 5e-6 absolute, and the GELU 0.5 x (1 + tanh u) within 0.5 |x| 5e-6 <= 1.4e-5 at the largest x
//     before saturation (5.4), where atol + rtol |ref| allows 1.7e-5.
struct Tolerance {
  double nmse = 1e-7;              // fp32 outputs
  double rtol = 1.3e-6, atol = 1e-5;  // per element
  double rounded_share = 0.99;     // 16-bit outputs
};
Tolerance tolerance(Precision precision);

}  // namespace core
