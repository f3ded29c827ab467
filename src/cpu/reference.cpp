// The plain reference kernels (see reference.hpp): one loop nest per formula, in double, in the order the formula is
// written. Nothing here is fast on purpose.
#include "cpu/reference.hpp"

#include <cmath>

namespace cpu::reference {

namespace {
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;
}  // namespace

double activation(double x, core::Activation act) {
  if (act == core::Activation::ReLU) return x > 0 ? x : 0;
  return 0.5 * x * (1 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x)));
}

double activation_derivative(double x, core::Activation act) {
  if (act == core::Activation::ReLU) return x > 0 ? 1 : 0;
  const double u = kGeluScale * (x + kGeluCubic * x * x * x);
  const double du = kGeluScale * (1 + 3 * kGeluCubic * x * x);
  const double t = std::tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
}

void gather_batch(double* x_out, int32_t* y_out, const double* x, const int32_t* y, const uint32_t* order, long B,
                  long C, long first) {
  for (long b = 0; b < B; ++b) {
    const long row = order[first + b];
    for (long c = 0; c < C; ++c) x_out[b * C + c] = x[row * C + c];
    y_out[b] = y[row];
  }
}

void matmul_forward(double* out, double* preact, const double* inp, const double* weight, const double* bias, long B,
                    long C, long OC, bool apply_act, core::Activation act) {
  for (long b = 0; b < B; ++b) {
    for (long o = 0; o < OC; ++o) {
      double sum = bias ? bias[o] : 0.0;  // no bias: --unfused's plain GEMM
      for (long c = 0; c < C; ++c) sum += inp[b * C + c] * weight[o * C + c];
      if (apply_act) {
        preact[b * OC + o] = sum;
        out[b * OC + o] = activation(sum, act);
      } else {
        out[b * OC + o] = sum;
      }
    }
  }
}

void softmax_xent_forward_backward(double* losses, double* dlogits, int32_t* correct, const double* logits,
                                   const int32_t* labels, long B, long K, double dloss_scale) {
  for (long b = 0; b < B; ++b) {
    const double* z = logits + b * K;
    long argmax = 0;
    for (long k = 1; k < K; ++k)
      if (z[k] > z[argmax]) argmax = k;
    double sum = 0;
    for (long k = 0; k < K; ++k) sum += std::exp(z[k] - z[argmax]);
    const long label = labels[b];
    losses[b] = std::log(sum) - (z[label] - z[argmax]);  // -log(exp(z_label - max) / sum)
    if (correct) correct[b] = argmax == label ? 1 : 0;
    if (dlogits)
      for (long k = 0; k < K; ++k) {
        const double p = std::exp(z[k] - z[argmax]) / sum;
        dlogits[b * K + k] = (p - (k == label ? 1.0 : 0.0)) * dloss_scale;
      }
  }
}

double loss_reduce(const double* losses, long B) {
  double sum = 0;
  for (long b = 0; b < B; ++b) sum += losses[b];
  return B > 0 ? sum / static_cast<double>(B) : 0;
}

void bias_add(double* out, const double* bias, long B, long OC) {
  for (long b = 0; b < B; ++b)
    for (long o = 0; o < OC; ++o) out[b * OC + o] += bias[o];
}

void act_forward(double* preact, double* out, long N, core::Activation act) {
  for (long i = 0; i < N; ++i) {
    preact[i] = out[i];
    out[i] = activation(out[i], act);
  }
}

void act_backward(double* dpreact, const double* dout, const double* preact, long N, core::Activation act) {
  for (long i = 0; i < N; ++i) dpreact[i] = dout[i] * activation_derivative(preact[i], act);
}

void matmul_backward_weight(double* dweight, const double* dout, const double* inp, long B, long C, long OC) {
  for (long o = 0; o < OC; ++o)
    for (long c = 0; c < C; ++c) {
      double sum = 0;
      for (long b = 0; b < B; ++b) sum += dout[b * OC + o] * inp[b * C + c];
      dweight[o * C + c] = sum;
    }
}

void bias_backward(double* dbias, const double* dout, long B, long OC) {
  for (long o = 0; o < OC; ++o) {
    double sum = 0;
    for (long b = 0; b < B; ++b) sum += dout[b * OC + o];
    dbias[o] = sum;
  }
}

void matmul_backward_data(double* dinp, const double* dout, const double* weight, long B, long C, long OC) {
  for (long b = 0; b < B; ++b)
    for (long c = 0; c < C; ++c) {
      double sum = 0;
      for (long o = 0; o < OC; ++o) sum += dout[b * OC + o] * weight[o * C + c];
      dinp[b * C + c] = sum;
    }
}

void adamw_update(double* params, double* m, double* v, const double* grads, long N, double lr, double beta1,
                  double beta2, double eps, double weight_decay, long t, double grad_scale) {
  const double bc1 = 1 - std::pow(beta1, static_cast<double>(t));
  const double bc2 = 1 - std::pow(beta2, static_cast<double>(t));
  for (long i = 0; i < N; ++i) {
    const double g = grads[i] * grad_scale;
    params[i] -= lr * weight_decay * params[i];
    m[i] = beta1 * m[i] + (1 - beta1) * g;
    v[i] = beta2 * v[i] + (1 - beta2) * g * g;
    params[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
  }
}

void sgd_update(double* params, double* momentum_buf, const double* grads, long N, double lr, double momentum,
                double weight_decay, long t, double grad_scale) {
  for (long i = 0; i < N; ++i) {
    const double g = grads[i] * grad_scale + weight_decay * params[i];
    momentum_buf[i] = t <= 1 ? g : momentum * momentum_buf[i] + g;
    params[i] -= lr * momentum_buf[i];
  }
}

bool check_finite_grads(const double* grads, long N) {
  for (long i = 0; i < N; ++i)
    if (!std::isfinite(grads[i])) return true;
  return false;
}

void update_loss_scale(core::LossScalerBuffer& s, core::ScaleHistoryEntry& history,
                       const core::UpdateLossScaleParams& p) {
  history.loss_scale = s.scale;
  history.found_inf = s.found_inf;
  if (s.found_inf != 0) {
    s.scale = static_cast<float>(double(s.scale) * p.backoff_factor);
    s.growth_tracker = 0;
    s.skipped += 1;
  } else {
    s.growth_tracker += 1;
    if (s.growth_tracker >= p.growth_interval) {
      const double grown = double(s.scale) * p.growth_factor;
      if (std::isfinite(static_cast<float>(grown))) s.scale = static_cast<float>(grown);
      s.growth_tracker = 0;
    }
    s.optimizer_steps += 1;
    s.beta1_pow = static_cast<float>(double(s.beta1_pow) * p.beta1);
    s.beta2_pow = static_cast<float>(double(s.beta2_pow) * p.beta2);
  }
  s.found_inf = 0;
}

}  // namespace cpu::reference
