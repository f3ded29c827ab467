// The CPU kernels on 16-bit storage (groundwork for mixed precision): tensors kept as fp16 or bf16 in uint16_t,
// arithmetic and accumulation in fp32. Each kernel widens its 16-bit operands to fp32 (exactly), runs the fp32 kernel
// of kernels.hpp, and rounds its outputs back to 16 bits (round to nearest even, core/half.hpp). So the result is
// bit for bit round(fp32 kernel(widened inputs)): the same arithmetic as the fp32 baseline, with half the bytes in the
// tensors. Results do not depend on the thread count (the fp32 kernels' do not; conversions are per element).
//
// Names are the fp32 kernels' with a "16" suffix; argument order is theirs (outputs, then inputs, then sizes), then
// the Storage16 format, then a Workspace16 where the kernel needs one, then the pool. Shapes and semantics: see
// kernels.hpp. cpu::Trainer runs them for TrainConfig::precision fp16 and bf16.
//
// Where the fp32 operands live:
//   - element-wise kernels (act_backward16, softmax_xent_forward_backward16, the optimizers) convert chunk by chunk
//     (kChunk16 elements) into per-thread buffers (3 x 4 KiB per thread; a softmax row longer than kChunk16 takes
//     2 x 4 bytes x K), so that the fp32 copies stay in L1 and need no workspace;
//   - gather_batch16 rounds each gathered row straight from the fp32 dataset;
//   - the matmuls and bias_backward16 need whole fp32 operands (every output reads a whole row or column) and widen
//     them into a caller-owned Workspace16 (conversions split over the pool).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model.hpp"

namespace cpu {

class ThreadPool;

enum class Storage16 { FP16, BF16 };  // IEEE binary16, bfloat16 (formats and rounding: core/half.hpp)
const char* to_string(Storage16 s);   // "fp16", "bf16"

// Elements per chunk of the element-wise kernels (per-thread fp32 buffers of 4 KiB each).
constexpr size_t kChunk16 = 1024;

// Grow-only fp32 scratch for the kernels that widen whole operands. One arena, carved per call into one region per
// operand (each rounded up to 16 floats = 64 bytes). Memory held: bytes() = 4 bytes x the largest call's total,
//   matmul_forward16:          B·C + OC·C + OC (0 without bias) + B·OC (+ B·OC with apply_act)
//   matmul_backward_weight16:  B·OC + B·C + OC·C
//   matmul_backward_data16:    B·OC + OC·C + B·C
//   bias_backward16:           B·OC + OC
// (plus up to 15 floats of padding per operand); for one training step, the largest of these over the layers. It
// grows only on the first call with a larger shape, so a steady state of training allocates nothing. Not thread-safe:
// one Workspace16 per training thread (the kernels split their work over the pool themselves).
class Workspace16 {
 public:
  // Returns `count` disjoint regions of sizes[i] floats each (contents unspecified), valid until the next call.
  void carve(float** regions, const size_t* sizes, int count);
  // The arena floats one carve(regions, sizes, count) needs (each size rounded up to 16), so that an owner can size
  // the arena up front for its largest call.
  static size_t floats_for(const size_t* sizes, int count);
  // Grows the arena to at least `floats` (never shrinks): afterwards no call needing at most that many allocates.
  void reserve(size_t floats);
  size_t bytes() const { return arena_.capacity() * sizeof(float); }  // memory held, in bytes
  void release() { arena_ = std::vector<float>(); }

 private:
  std::vector<float> arena_;
};

// Bulk conversions split over the pool (chunks of at least 16k elements). dst and src must not overlap.
void widen16(float* dst, const uint16_t* src, size_t n, Storage16 s, ThreadPool& pool);
void narrow16(uint16_t* dst, const float* src, size_t n, Storage16 s, ThreadPool& pool);

// x_out (B,C) 16-bit = round(x (N,C) fp32 gathered at rows indices (B)); y_out (B) <- y (N).
void gather_batch16(uint16_t* x_out, int32_t* y_out, const float* x, const int32_t* y, const uint32_t* indices,
                    long B, long C, Storage16 s, ThreadPool& pool);

// out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)), all 16-bit; with apply_act, preact (B,OC) receives
// round(the fp32 value before the activation) and out = round(act(that fp32 value)). bias null (--unfused): out =
// round(the plain sums).
void matmul_forward16(uint16_t* out, uint16_t* preact, const uint16_t* inp, const uint16_t* weight,
                      const uint16_t* bias, long B, long C, long OC, bool apply_act, core::Activation act, Storage16 s,
                      Workspace16& ws, ThreadPool& pool);

// losses (B) fp32; dlogits (B,K) 16-bit (may be null); correct (B) may be null; logits (B,K) 16-bit.
void softmax_xent_forward_backward16(float* losses, uint16_t* dlogits, int32_t* correct, const uint16_t* logits,
                                     const int32_t* labels, long B, long K, float dloss_scale, Storage16 s,
                                     ThreadPool& pool);

// --unfused: out (B,OC) += bias (OC), all 16-bit: out = round(out + bias) in fp32.
void bias_add16(uint16_t* out, const uint16_t* bias, long B, long OC, Storage16 s, ThreadPool& pool);

// --unfused: preact (N) = out (N); out (N) = round(act(out (N))), all 16-bit.
void act_forward16(uint16_t* preact, uint16_t* out, size_t N, core::Activation act, Storage16 s, ThreadPool& pool);

// dpreact (N) = dout (N) * act'(preact (N)), all 16-bit.
void act_backward16(uint16_t* dpreact, const uint16_t* dout, const uint16_t* preact, size_t N, core::Activation act,
                    Storage16 s, ThreadPool& pool);

// dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C), all 16-bit (overwrites).
void matmul_backward_weight16(uint16_t* dweight, const uint16_t* dout, const uint16_t* inp, long B, long C, long OC,
                              Storage16 s, Workspace16& ws, ThreadPool& pool);

// dbias (OC) = sum over b of dout (B,OC), all 16-bit (overwrites).
void bias_backward16(uint16_t* dbias, const uint16_t* dout, long B, long OC, Storage16 s, Workspace16& ws,
                     ThreadPool& pool);

// dinp (B,C) = dout (B,OC) · weight (OC,C), all 16-bit (overwrites).
void matmul_backward_data16(uint16_t* dinp, const uint16_t* dout, const uint16_t* weight, long B, long C, long OC,
                            Storage16 s, Workspace16& ws, ThreadPool& pool);

// check_finite_grads: returns found_inf, true when any of grads (N) is inf or NaN. Tests the exponent bits (all ones:
// fp16 0x7c00, bf16 0x7f80), so it holds whatever the floating-point flags of the build; split over the pool.
bool check_finite_grads16(const uint16_t* grads, size_t N, Storage16 s, ThreadPool& pool);

// The optimizers of mixed precision (Micikevicius et al. 2018, "Mixed Precision Training"): fp32 master params and
// fp32 state, 16-bit grads in; params is updated exactly as cpu::adamw_update / cpu::sgd_update would update it with
// the widened grads multiplied by grad_scale, and params16 (N) receives round(new params) in the same pass.
// grad_scale unscales loss-scaled grads: core::LossScaler::inv_scale() with fp16 loss scaling, else 1 (then the
// widened grads are used as they are). The overflow check and the decision to skip are the caller's
// (check_finite_grads16, core::LossScaler). grad_scale comes last, with a default, so that callers written before it
// existed still compile.
void adamw_update16(float* params, float* m, float* v, uint16_t* params16, const uint16_t* grads, size_t N, float lr,
                    float beta1, float beta2, float eps, float weight_decay, long t, Storage16 s, ThreadPool& pool,
                    float grad_scale = 1.0f);
void sgd_update16(float* params, float* momentum_buf, uint16_t* params16, const uint16_t* grads, size_t N, float lr,
                  float momentum, float weight_decay, long t, Storage16 s, ThreadPool& pool, float grad_scale = 1.0f);

}  // namespace cpu
