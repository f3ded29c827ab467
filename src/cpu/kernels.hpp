// The CPU kernels: the readable reference math of every training kernel, and the CPU baseline of the race.
// Names, argument order (outputs, then inputs, then sizes) and shapes match shaders/<name>.comp and core::Op.
// Templated on the element type: float for training, double for the finite-difference gradient checks.
// Every kernel splits its work over `pool`; pass a 1-thread pool for single-threaded use. The fp32 matmuls run the
// packed SIMD GEMM of gemm.hpp (AVX-512 or AVX2, chosen at run time); the rest, and double, are cache-blocked loops
// the compiler vectorizes. Results are bit-identical for every thread count and SIMD path.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/model.hpp"

namespace cpu {

class ThreadPool;

// x_out (B,C), y_out (B) <- x (N,C), y (N) gathered at rows indices (B).
template <typename T>
void gather_batch(T* x_out, int32_t* y_out, const float* x, const int32_t* y, const uint32_t* indices, long B, long C,
                  ThreadPool& pool);

// out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)). With apply_act, preact (B,OC) receives the value before
// the activation (needed by act_backward); without it preact may be null and out is the affine result (logits).
// bias null (--unfused): out = the plain sums inp · weightᵀ (apply_act must be false), bias_add and act_forward follow.
template <typename T>
void matmul_forward(T* out, T* preact, const T* inp, const T* weight, const T* bias, long B, long C, long OC,
                    bool apply_act, core::Activation act, ThreadPool& pool);

// losses (B) = -log softmax(logits)[label]; dlogits (B,K) = (softmax(logits) - onehot(label)) * dloss_scale
// (dloss_scale = 1/B for the mean loss). dlogits may be null (evaluation). correct (B), if not null, receives
// 1 where argmax(logits) == label (first maximum wins), else 0.
template <typename T>
void softmax_xent_forward_backward(T* losses, T* dlogits, int32_t* correct, const T* logits, const int32_t* labels,
                                   long B, long K, T dloss_scale, ThreadPool& pool);

// Mean of losses (B), accumulated in double (the GPU accumulates in fp32 by a tree reduction).
template <typename T>
T loss_reduce(const T* losses, long B);

// dpreact (N) = dout (N) * act'(preact (N)). ReLU: 1 where preact > 0. GELU (tanh approximation): its derivative.
template <typename T>
void act_backward(T* dpreact, const T* dout, const T* preact, size_t N, core::Activation act, ThreadPool& pool);

// --unfused: out (B,OC) += bias (OC), in place (the same fp32 addition as matmul_forward's epilogue).
template <typename T>
void bias_add(T* out, const T* bias, long B, long OC, ThreadPool& pool);

// --unfused: preact (N) = out (N); out (N) = act(out (N)), in place (the same formula as matmul_forward's epilogue).
template <typename T>
void act_forward(T* preact, T* out, size_t N, core::Activation act, ThreadPool& pool);

// dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C)  (overwrites, no accumulation)
template <typename T>
void matmul_backward_weight(T* dweight, const T* dout, const T* inp, long B, long C, long OC, ThreadPool& pool);

// dbias (OC) = sum over b of dout (B,OC)  (overwrites)
template <typename T>
void bias_backward(T* dbias, const T* dout, long B, long OC, ThreadPool& pool);

// dinp (B,C) = dout (B,OC) · weight (OC,C)  (overwrites)
template <typename T>
void matmul_backward_data(T* dinp, const T* dout, const T* weight, long B, long C, long OC, ThreadPool& pool);

// AdamW (Loshchilov & Hutter 2019), exactly torch.optim.AdamW's update for step t >= 1:
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²;
//   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
// params, m, v, grads: N elements.
template <typename T>
void adamw_update(T* params, T* m, T* v, const T* grads, size_t N, float lr, float beta1, float beta2, float eps,
                  float weight_decay, long t, ThreadPool& pool);

// SGD with momentum, torch.optim.SGD semantics (dampening 0, no Nesterov):
//   g += wd*p; buf = momentum*buf + g (buf = g at t == 1); p -= lr*buf
template <typename T>
void sgd_update(T* params, T* momentum_buf, const T* grads, size_t N, float lr, float momentum, float weight_decay,
                long t, ThreadPool& pool);

// The activation itself (for tests and the reference): ReLU max(0,x); GELU 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x³))).
template <typename T>
T activation(T x, core::Activation act);

}  // namespace cpu
