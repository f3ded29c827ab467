// What a kernel's file src/cpu/ops/<kernel>.cpp is made of, and what it includes. A kernel is one such file (with its
// shader shaders/<kernel>.comp and its params struct in shaders/common/kernel_params.h), compiled twice
// (src/CMakeLists.txt):
//   - into trainscope_cpu: the tuned CPU twin, in fp32, its work split over the pool (Bindings: Storage bindings as
//     floats); the plain reference in double, the obvious loops read top to bottom (RefBindings); and
//     `const Kernel <kernel>{.tuned = ..., .reference = ...}` (namespace cpu::ops), through which cpu::kernel() finds
//     them;
//   - with TRAINSCOPE_KERNEL_TABLE defined, into trainscope_kernels (archived into trainscope_core, so that every
//     layer has the table and none links the CPU code): its kernel-table entry only,
//     `const core::KernelDef <kernel>{...}` (namespace kernels), written with designated initializers: bindings,
//     params, workgroup geometry, FLOP and byte formulas (core/kernel_table.hpp).
// So a kernel's file is `#ifndef TRAINSCOPE_KERNEL_TABLE` (the CPU code) `#else` (the entry) `#endif`, and what the
// entry needs (the helpers below up to "The CPU code's part") includes only core.
// cmake/kernels.cmake lists the files, and the table (core/kernel_table.cpp), cpu::kernel() (cpu/kernel_registry.cpp)
// and core::Op are made from that list, so the file is all there is to register. The 16-bit variants need no code:
// cpu::run_kernel widens a kernel's 16-bit bindings to fp32, runs the fp32 twin and rounds its 16-bit outputs back
// (only kernels whose 16-bit variant does something else, the loss-scaled optimizers and check_finite_grads, have
// `tuned16`).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/kernel_table.hpp"

// What the entries are written with (and the CPU code reads too): element counts, figures, push constants, geometry.
namespace kernels {

// LayerNorm's eps, added to the variance (torch.nn.LayerNorm's default): the kernels' (layernorm_params) and the
// transformer reference's.
inline constexpr double kLayerNormEps = 1e-5;

using core::Access;
using core::Elem;
using core::Grid;
using core::KernelArgs;
using core::PlanEntry;
using core::Precision;
using core::Role;
using core::StepArgs;
using core::When;

// ---- Entries: element counts of bindings (BindingDef::elements) ----
namespace shape {
inline size_t B_x_C(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.B * e.C); }
inline size_t B_x_OC(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.B * e.OC); }
inline size_t OC_x_C(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.OC * e.C); }
inline size_t OC(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.OC); }
inline size_t B(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.B); }  // a value per row
inline size_t C(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.C); }  // a value per feature
inline size_t N(const PlanEntry& e, const StepArgs&) { return e.N; }
}  // namespace shape
// The rows of softmax_xent_forward_backward and loss_reduce whose targets count: the entry's N where set (a
// transformer's masked positions), else all B.
inline long counted(const PlanEntry& e) { return e.N > 0 ? static_cast<long>(e.N) : e.B; }
namespace shape {
// Convolutions and pooling (NHWC): the input (B,H,W,C), the output (B,OH,OW,OC; pooling: OC = C), the weight
// (OC,KS,KS,C).
inline size_t image_in(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.B * e.H * e.W * e.C); }
inline size_t image_out(const PlanEntry& e, const StepArgs&) {
  return static_cast<size_t>(e.B * e.OH() * e.OW() * e.OC);
}
inline size_t conv_weight(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.OC * e.KS * e.KS * e.C); }
inline size_t pool_out(const PlanEntry& e, const StepArgs&) { return static_cast<size_t>(e.B * e.OH() * e.OW() * e.C); }
// Attention's: B sequences of T positions. qkv (B*T, 3C), a row's y or dy (B*T, C), a statistic per row and head.
inline size_t qkv(const PlanEntry& e, const StepArgs&) { return size_t(e.B) * size_t(e.T) * size_t(3 * e.C); }
inline size_t seq_x_C(const PlanEntry& e, const StepArgs&) { return size_t(e.B) * size_t(e.T) * size_t(e.C); }
inline size_t attn_stats(const PlanEntry& e, const StepArgs&) { return size_t(e.B) * size_t(e.heads) * size_t(e.T); }
}  // namespace shape

// ---- Entries: figures and push constants ----
inline double e_of(Precision p) { return static_cast<double>(core::storage_bytes(p)); }  // bytes of a Storage element
inline constexpr double kIdx = 4;  // bytes of an int32 label or uint32 index
inline double n_of(const PlanEntry& e) { return static_cast<double>(e.N); }
inline uint32_t u32(long v) { return static_cast<uint32_t>(v); }
inline bool loss_scaled(Precision p) { return p == Precision::FP16; }  // fp16 trains with loss scaling
// ACT_RELU (0), ACT_GELU (1), ACT_SILU (2) of shaders/common/activation.glsl, and back (a code out of range is a
// programming error: the plan only ever writes act_code's values).
inline uint32_t act_code(core::Activation a) {
  switch (a) {
    case core::Activation::ReLU: return 0;
    case core::Activation::GELU: return 1;
    case core::Activation::SiLU: return 2;
  }
  return 0;
}
inline core::Activation activation_of(uint32_t code) {
  for (core::Activation a : core::kActivations)
    if (act_code(a) == code) return a;
  throw core::Error(core::ErrorKind::Internal, "activation code out of range");
}
// Work per element for the thread pool's grain: a compare for ReLU, an exp or tanh (about 30 operations) otherwise.
inline double act_work(core::Activation a) { return a == core::Activation::ReLU ? 1.0 : 30.0; }
// The work items of a 4-wide element-wise kernel over n elements: one per group of four (the shader's grid-stride loop
// and scalar tail cover any n with that many invocations, rounded up to whole workgroups).
inline std::array<uint64_t, 2> quads(long n) { return {static_cast<uint64_t>(n + 3) / 4, 1}; }

// The convolution backward kernels' push constants from a plan entry.
inline core::Conv2dBackwardParams conv_backward_params(const PlanEntry& e) {
  return {u32(e.B), u32(e.H), u32(e.W), u32(e.C), u32(e.OC), u32(e.OH()), u32(e.OW()), u32(e.KS), u32(e.pad)};
}
// The LayerNorm kernels' push constants from a plan entry: B rows of C features, torch's eps; layernorm_backward adds
// into din where the entry accumulates (a transformer's residual stream).
inline core::LayerNormParams layernorm_params(const PlanEntry& e) {
  return {u32(e.B), u32(e.C), static_cast<float>(kLayerNormEps), e.accumulate ? 1u : 0u};
}
// The attention kernels (issue 35): B sequences of T positions, `heads` heads of D = C / heads features. Their push
// constants (the scores scaled by 1 / sqrt(D)); their geometry: one invocation per query (or key) row, each head's
// rows rounded up to whole workgroups of kAttentionTile (the shaders' TILE); the causal (query, key at or before it)
// pairs their FLOP formulas count.
inline constexpr uint32_t kAttentionTile = 32;
inline core::AttentionParams attention_params(const PlanEntry& e) {
  const long D = e.C / e.heads;
  return {u32(e.B), u32(e.T), u32(e.heads), u32(D), 1.0f / std::sqrt(static_cast<float>(D))};
}
inline std::array<uint64_t, 2> attention_rows(const PlanEntry& e) {
  const uint64_t rows = (uint64_t(e.T) + kAttentionTile - 1) / kAttentionTile * kAttentionTile;
  return {uint64_t(e.B) * uint64_t(e.heads) * rows, 1};
}
inline double attention_pairs(const PlanEntry& e) { return double(e.B) * e.heads * double(e.T) * double(e.T + 1) / 2; }
// The naive attention's (issue 35): its matrix of scores (B, heads, T, T) and that matrix's rows.
inline uint64_t attn_rows(const PlanEntry& e) { return uint64_t(e.B) * uint64_t(e.heads) * uint64_t(e.T); }
inline uint64_t attn_matrix(const PlanEntry& e) { return attn_rows(e) * uint64_t(e.T); }
namespace shape {
inline size_t attn_matrix(const PlanEntry& e, const StepArgs&) { return size_t(kernels::attn_matrix(e)); }
}  // namespace shape
// The 2x2 max pooling kernels' push constants from a plan entry.
inline core::MaxPoolParams max_pool_params(const PlanEntry& e) {
  return {u32(e.B), u32(e.H), u32(e.W), u32(e.C), u32(e.OH()), u32(e.OW())};
}
// The GEMM family's traits (core::GemmTraits): 4-wide loads where the operands' contiguous dimensions allow them
// (forward: C; the backward GEMMs and the convolutions: C and OC), and the largest operand, output included (a dense
// layer's inp B x C, weight OC x C, out B x OC; a convolution's input B x H x W x C, output B x OH x OW x OC and
// weight OC x KS x KS x C).
inline bool vec4_c(const PlanEntry& e) { return e.C % 4 == 0; }
inline bool vec4_c_oc(const PlanEntry& e) { return e.C % 4 == 0 && e.OC % 4 == 0; }
inline uint64_t dense_largest(const PlanEntry& e) {
  return std::max({uint64_t(e.B) * uint64_t(e.C), uint64_t(e.OC) * uint64_t(e.C), uint64_t(e.B) * uint64_t(e.OC)});
}
inline uint64_t conv_largest(const PlanEntry& e) {
  return std::max({uint64_t(e.B) * uint64_t(e.H) * uint64_t(e.W) * uint64_t(e.C),
                   uint64_t(e.B) * uint64_t(e.OH()) * uint64_t(e.OW()) * uint64_t(e.OC),
                   uint64_t(e.OC) * uint64_t(e.KS) * uint64_t(e.KS) * uint64_t(e.C)});
}

// Pixels of a convolution's output (B x OH x OW) and multiply-adds per output pixel and channel (KS² x C).
inline double conv_pixels(const PlanEntry& e) { return double(e.B) * double(e.OH()) * double(e.OW()); }
inline double conv_taps(const PlanEntry& e) { return double(e.KS) * double(e.KS) * double(e.C); }

}  // namespace kernels

#ifdef TRAINSCOPE_KERNEL_TABLE
// The entries, named as their files (extern, so that each definition has external linkage and core/kernel_table.cpp
// finds it).
namespace kernels {
#define TRAINSCOPE_KERNEL(name) extern const core::KernelDef name;
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL
}  // namespace kernels

#else  // The CPU code's part: trainscope_cpu only.
#include "cpu/fast_math.hpp"
#include "cpu/storage16.hpp"
#include "cpu/thread_pool.hpp"

namespace cpu {

using kernels::kLayerNormEps;  // the transformer reference's too

// The memory of a kernel's bindings in binding order, as its tuned twin sees it: Storage bindings hold floats (16-bit
// ones widened by the caller); a binding is null where absent in the precision or not touched by this call.
class Bindings {
 public:
  explicit Bindings(std::span<void* const> pointers) : p_(pointers) {}
  template <typename T>
  T* at(size_t i) const {
    return i < p_.size() ? static_cast<T*>(p_[i]) : nullptr;
  }
  float* f32(size_t i) const { return at<float>(i); }

 private:
  std::span<void* const> p_;
};

// The reference's bindings: binding i's elements as doubles (Storage, F32, I32 and U32 values; a LossScalerBuffer or
// ScaleHistoryEntry as its members in order, one group per element), empty where absent in the precision.
using RefBindings = std::span<std::vector<double>>;

// One kernel's CPU code (its table entry: core::kernel_def(op)).
struct Kernel {
  // The tuned CPU twin in fp32. Null for a kernel that exists only in 16-bit storage (check_finite_grads).
  void (*tuned)(const Bindings& b, const core::KernelArgs& a, ThreadPool& pool) = nullptr;
  // 16-bit code of its own, Storage bindings as 16-bit bits (fp16 or bf16: `precision`); null: the 16-bit variant is
  // `tuned` on the widened bindings.
  void (*tuned16)(const Bindings& b, const core::KernelArgs& a, core::Precision precision, ThreadPool& pool) = nullptr;
  // The plain reference in double: reads and writes its bindings in place, never rounds.
  void (*reference)(RefBindings b, const core::KernelArgs& a) = nullptr;
};

// The CPU code of `op` (cpu/kernel_registry.cpp, from the kernel list; checked against the table on first use).
const Kernel& kernel(core::Op op);

namespace ops {

using namespace kernels;  // the entries' helpers: the CPU code reads its push constants and shapes with them

// Every kernel's CPU code, named as its file (extern, so that its definition has external linkage and the registry finds
// it).
#define TRAINSCOPE_KERNEL(name) extern const Kernel name;
#include "kernel_list.inc"
#undef TRAINSCOPE_KERNEL

// ---- References: reading the bindings as the reference holds them ----
inline double* ref(RefBindings b, size_t i) { return i < b.size() && !b[i].empty() ? b[i].data() : nullptr; }
inline std::vector<int32_t> ints(const std::vector<double>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

// The activation and its derivative in double: ReLU max(0, x); GELU with the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))) (Hendrycks & Gimpel 2016; torch approximate='tanh'); SiLU
// x sigmoid(x) (Elfwing et al. 2018; torch.nn.SiLU). The kernels' references and the whole-step reference use these.
double ref_activation(double x, core::Activation act);
double ref_activation_derivative(double x, core::Activation act);

// ---- fp16 loss scaling: the scaler binding (core::LossScalerBuffer) ----
core::LossScalerBuffer scaler_of(const std::vector<double>& members);  // the reference's 8 doubles, as the struct
void store_scaler(std::vector<double>& members, const core::LossScalerBuffer& s);

// What the optimizers do with the scaler present (as the shaders do): skip a step whose gradients overflowed, unscale
// the others by 1 / scale, and count t on the scaler's step clock. Without a scaler: no skip, scale 1, t as given.
struct Unscale {
  bool skip = false;
  float grad_scale = 1.0f;
  long t = 0;
};
Unscale unscale(const core::LossScalerBuffer* scaler, long t);

// The optimizers' own 16-bit variant, in one pass over [0, N) split over the pool (chunks of `grain`): per kChunk16
// elements, the 16-bit grads widened and multiplied by grad_scale (1: left as widened, bit for bit the unscaled update)
// into an L1 buffer, update(i0, g, n) (the fp32 update of elements [i0, i0 + n) from g) while params and state are in
// L1, then params [i0, i0 + n) rounded into weights16 (the copy the other kernels read).
template <typename Update>
void update16(const uint16_t* grads, uint16_t* weights16, const float* params, size_t N, size_t grain, float grad_scale,
              Precision precision, ThreadPool& pool, Update update) {
  pool.parallel_for(N, grain, [&](size_t i0, size_t i1) {
    float* g = chunk_buffer(0, kChunk16);
    for (size_t c0 = i0; c0 < i1; c0 += kChunk16) {
      const size_t n = std::min(kChunk16, i1 - c0);
      widen(g, grads + c0, n, precision);
      if (grad_scale != 1.0f)
        for (size_t i = 0; i < n; ++i) g[i] *= grad_scale;
      update(c0, static_cast<const float*>(g), n);
      narrow(weights16 + c0, params + c0, n, precision);
    }
  });
}

}  // namespace ops
}  // namespace cpu
#endif  // TRAINSCOPE_KERNEL_TABLE
