// The plain reference: every kernel as the obvious loops in double, read top to bottom (in the manner of llm.c's
// train_gpt2.c). Not used for training, not tuned, not threaded: the oracle that the tuned CPU kernels
// (cpu/kernels.hpp) and the GPU shaders are both tested against (tests/test_kernel_parity.cpp), so that a mistake they
// share cannot hide. Names, argument order (outputs, then inputs, then sizes) and shapes are those of
// shaders/<name>.comp and cpu/kernels.hpp; in the 16-bit precisions the caller rounds what it compares, the reference
// itself never rounds.
#pragma once
#include <cstdint>

#include "kernel_params.h"  // shaders/common
#include "core/model.hpp"

namespace cpu::reference {

// The activation and its derivative: ReLU max(0, x); GELU with the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))) (Hendrycks & Gimpel 2016; torch approximate='tanh').
double activation(double x, core::Activation act);
double activation_derivative(double x, core::Activation act);

// x_out (B,C), y_out (B) <- rows order[first + b] of x (N,C), y (N).
void gather_batch(double* x_out, int32_t* y_out, const double* x, const int32_t* y, const uint32_t* order, long B,
                  long C, long first);

// out (B,OC) = act(inp (B,C) · weight (OC,C)ᵀ + bias (OC)); with apply_act, preact (B,OC) = the value before act.
void matmul_forward(double* out, double* preact, const double* inp, const double* weight, const double* bias, long B,
                    long C, long OC, bool apply_act, core::Activation act);

// losses[b] = -log softmax(logits[b])[labels[b]]; dlogits (B,K) = (softmax - onehot) * dloss_scale (may be null);
// correct[b] = 1 where the first maximum of logits[b] is the label (may be null).
void softmax_xent_forward_backward(double* losses, double* dlogits, int32_t* correct, const double* logits,
                                   const int32_t* labels, long B, long K, double dloss_scale);

// The mean of losses (B).
double loss_reduce(const double* losses, long B);

// dpreact (N) = dout (N) * act'(preact (N)).
// --unfused: out (B,OC) += bias (OC).
void bias_add(double* out, const double* bias, long B, long OC);
// --unfused: preact (N) = out (N); out (N) = act(out (N)).
void act_forward(double* preact, double* out, long N, core::Activation act);
void act_backward(double* dpreact, const double* dout, const double* preact, long N, core::Activation act);

// dweight (OC,C) = dout (B,OC)ᵀ · inp (B,C).
void matmul_backward_weight(double* dweight, const double* dout, const double* inp, long B, long C, long OC);

// dbias (OC) = sum over b of dout (B,OC).
void bias_backward(double* dbias, const double* dout, long B, long OC);

// dinp (B,C) = dout (B,OC) · weight (OC,C).
void matmul_backward_data(double* dinp, const double* dout, const double* weight, long B, long C, long OC);

// AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW for step t >= 1, on grads * grad_scale:
//   p -= lr*wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g²; p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
void adamw_update(double* params, double* m, double* v, const double* grads, long N, double lr, double beta1,
                  double beta2, double eps, double weight_decay, long t, double grad_scale);

// SGD with momentum as torch.optim.SGD (dampening 0, no Nesterov), on grads * grad_scale:
//   g += wd*p; buf = momentum*buf + g (buf = g at t == 1); p -= lr*buf
void sgd_update(double* params, double* momentum_buf, const double* grads, long N, double lr, double momentum,
                double weight_decay, long t, double grad_scale);

// True when any of grads (N) is inf or NaN.
bool check_finite_grads(const double* grads, long N);

// GradScaler's update of the loss scaler after a step (torch's _amp_update_scale_), and the step clock:
//   history = (scale, found_inf); overflow: scale *= backoff, tracker = 0, skipped += 1; clean: tracker += 1, at
//   growth_interval scale *= growth (unless that is inf) and tracker = 0, optimizer_steps += 1, beta powers *= beta;
//   found_inf = 0.
void update_loss_scale(core::LossScalerBuffer& scaler, core::ScaleHistoryEntry& history,
                       const core::UpdateLossScaleParams& p);

}  // namespace cpu::reference
