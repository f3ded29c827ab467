// The whole-step reference (see train_step.hpp): the step as plain loops in double, read top to bottom.
#include "cpu/train_step.hpp"

#include <algorithm>
#include <cmath>

#include "core/half.hpp"
#include "core/power.hpp"
#include "cpu/ops/op.hpp"

namespace cpu::reference {
namespace {

using core::Activation;
using core::Precision;
using Tensor = std::vector<double>;

// What a tensor of type `p` holds for the value x: x rounded to fp32, then to fp16 or bf16 (nearest even; inf
// beyond fp16's range), as a backend computes in fp32 and narrows.
double store(double x, Precision p) {
  const float f = static_cast<float>(x);
  if (p == Precision::FP16) return core::fp16_to_float(core::float_to_fp16(f));
  if (p == Precision::BF16) return core::bf16_to_float(core::float_to_bf16(f));
  return f;
}
double store32(double x) { return static_cast<float>(x); }

// The activation and its derivative in double: the kernels' references' (cpu/ops/op.hpp), written once.
double activation(double x, Activation a) { return ops::ref_activation(x, a); }
double activation_grad(double x, Activation a) { return ops::ref_activation_derivative(x, a); }

// The activations of one forward pass: in[l] is layer l's input (B, fan_in), pre[l] its output before the activation
// (layers followed by one), in[L] the logits (B, classes). Images are NHWC (core/model.hpp).
struct Forward {
  std::vector<Tensor> in, pre;
};

// Tap (ky, kx) of output pixel (y, x) of a 3x3 convolution with padding 1 reads input pixel (y + ky - 1, x + kx - 1);
// outside the image, the zero padding.
constexpr long kK = core::ModelShape::kConvKernel, kPad = core::ModelShape::kConvPad;
bool inside(long y, long x, const core::Image& im) { return y >= 0 && y < im.h && x >= 0 && x < im.w; }

// Layer l's affine sum of output unit o (dense: feature o; conv: o = (y, x, oc) of its image) for sample b.
double affine_sum(const core::ModelShape& shape, int l, const Tensor& in, const double* W, long b, long o) {
  const long C = shape.fan_in(l);
  double sum = 0;
  if (shape.kind(l) == core::LayerKind::Dense) {
    for (long c = 0; c < C; ++c) sum += in[b * C + c] * W[o * C + c];
    return sum;
  }
  const core::Image im = shape.images[l], om = shape.images[l + 1];
  const long oc = o % om.c, x = (o / om.c) % om.w, y = o / om.c / om.w;
  for (long ky = 0; ky < kK; ++ky)
    for (long kx = 0; kx < kK; ++kx) {
      const long iy = y + ky - kPad, ix = x + kx - kPad;
      if (!inside(iy, ix, im)) continue;
      for (long c = 0; c < im.c; ++c)
        sum += in[b * C + (iy * im.w + ix) * im.c + c] * W[((oc * kK + ky) * kK + kx) * im.c + c];
    }
  return sum;
}

// The input element (of sample b's image im) that output unit o of a 2x2 max pool copies: its window's first maximum
// in the order (0,0), (0,1), (1,0), (1,1).
long pool_source(const Tensor& in, const core::Image& im, const core::Image& om, long b, long o) {
  const long c = o % om.c, x = (o / om.c) % om.w, y = o / om.c / om.w;
  long best = -1;
  for (long dy = 0; dy < 2; ++dy)
    for (long dx = 0; dx < 2; ++dx) {
      const long i = b * im.size() + ((2 * y + dy) * im.w + 2 * x + dx) * im.c + c;
      if (best < 0 || in[i] > in[best]) best = i;
    }
  return best;
}

// x (B, C0) <- the rows of the dataset, then every layer: out = act(affine(in) + b), or the pool's maxima.
Forward forward(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& data,
                std::span<const uint32_t> rows, const Tensor& weights) {
  const Precision p = cfg.precision;
  const long B = static_cast<long>(rows.size()), L = shape.layers();
  Forward f{std::vector<Tensor>(L + 1), std::vector<Tensor>(L)};
  f.in[0].resize(B * shape.inputs());
  for (long b = 0; b < B; ++b)
    for (long c = 0; c < shape.inputs(); ++c) f.in[0][b * shape.inputs() + c] = store(data.row(rows[b])[c], p);
  for (int l = 0; l < L; ++l) {
    const long OC = shape.fan_out(l);
    const bool act = shape.has_activation(l);
    f.in[l + 1].resize(B * OC);
    if (act) f.pre[l].resize(B * OC);
    if (shape.kind(l) == core::LayerKind::Pool) {
      for (long b = 0; b < B; ++b)
        for (long o = 0; o < OC; ++o)
          f.in[l + 1][b * OC + o] = f.in[l][pool_source(f.in[l], shape.images[l], shape.images[l + 1], b, o)];
      continue;
    }
    const double* W = weights.data() + shape.weight_offset[l];
    const double* bias = weights.data() + shape.bias_offset[l];
    const long channels = shape.images[l + 1].c;  // the bias of unit o is its channel's (dense: o)
    for (long b = 0; b < B; ++b)
      for (long o = 0; o < OC; ++o) {
        const double sum = affine_sum(shape, l, f.in[l], W, b, o), bo = bias[o % channels];
        // --unfused stores the GEMM's sums, adds the bias in a kernel of its own and stores again.
        const double z = cfg.execution.unfused ? store(store(sum, p) + bo, p) : sum + bo;
        if (act) f.pre[l][b * OC + o] = store(z, p);
        f.in[l + 1][b * OC + o] = store(act ? activation(z, cfg.activation) : z, p);
      }
  }
  return f;
}

// losses[b] = -log softmax(logits[b])[label]; dlogits = (softmax - onehot) / B * dloss_scale; correct[b].
struct Loss {
  Tensor losses, dlogits;
  std::vector<int> correct;
};
Loss softmax_cross_entropy(const Tensor& logits, const int32_t* labels, long B, long K, double dloss_scale) {
  Loss out{Tensor(B), Tensor(B * K), std::vector<int>(B)};
  for (long b = 0; b < B; ++b) {
    const double* z = logits.data() + b * K;
    const long argmax = std::max_element(z, z + K) - z;  // the first maximum
    double sum = 0;
    for (long k = 0; k < K; ++k) sum += std::exp(z[k] - z[argmax]);
    out.losses[b] = std::log(sum) - (z[labels[b]] - z[argmax]);
    out.correct[b] = argmax == labels[b];
    for (long k = 0; k < K; ++k)
      out.dlogits[b * K + k] = (std::exp(z[k] - z[argmax]) / sum - (k == labels[b] ? 1 : 0)) / B * dloss_scale;
  }
  return out;
}

// The gradients (ModelShape layout, stored) from d = dlogits down to the first layer; largest |value| before
// rounding into *largest (the overflow margin of fp16).
Tensor backward(const core::TrainConfig& cfg, const core::ModelShape& shape, const Forward& f, const Tensor& weights,
                Tensor d, double* largest) {
  const Precision p = cfg.precision;
  const long L = shape.layers(), B = static_cast<long>(f.in[0].size()) / shape.inputs();
  Tensor grads(weights.size(), 0.0);
  auto keep = [&](double x) {
    *largest = std::max(*largest, std::fabs(x));
    return store(x, p);
  };
  for (int l = L - 1; l >= 0; --l) {
    const long C = shape.fan_in(l), OC = shape.fan_out(l);
    const core::Image im = shape.images[l], om = shape.images[l + 1];
    const Tensor& in = f.in[l];
    Tensor din(B * C, 0.0);  // the gradient of layer l's input, before rounding
    if (shape.kind(l) == core::LayerKind::Pool) {
      for (long b = 0; b < B; ++b)
        for (long o = 0; o < OC; ++o) din[pool_source(in, im, om, b, o)] = d[b * OC + o];
    } else if (shape.kind(l) == core::LayerKind::Dense) {
      for (long o = 0; o < OC; ++o) {
        double db = 0;
        for (long b = 0; b < B; ++b) db += d[b * OC + o];
        grads[shape.bias_offset[l] + o] = keep(db);
        for (long c = 0; c < C; ++c) {
          double dw = 0;
          for (long b = 0; b < B; ++b) dw += d[b * OC + o] * in[b * C + c];
          grads[shape.weight_offset[l] + o * C + c] = keep(dw);
        }
      }
      const double* W = weights.data() + shape.weight_offset[l];
      if (l > 0)
        for (long b = 0; b < B; ++b)
          for (long c = 0; c < C; ++c)
            for (long o = 0; o < OC; ++o) din[b * C + c] += d[b * OC + o] * W[o * C + c];
    } else {  // a 3x3 convolution: every (output pixel, tap) pair once
      const double* W = weights.data() + shape.weight_offset[l];
      std::vector<double> dw(shape.weight_count(l), 0.0), db(static_cast<size_t>(om.c), 0.0);
      for (long b = 0; b < B; ++b)
        for (long y = 0; y < om.h; ++y)
          for (long x = 0; x < om.w; ++x)
            for (long oc = 0; oc < om.c; ++oc) {
              const double g = d[b * OC + (y * om.w + x) * om.c + oc];
              db[oc] += g;
              for (long ky = 0; ky < kK; ++ky)
                for (long kx = 0; kx < kK; ++kx) {
                  const long iy = y + ky - kPad, ix = x + kx - kPad;
                  if (!inside(iy, ix, im)) continue;
                  for (long c = 0; c < im.c; ++c) {
                    const long wi = ((oc * kK + ky) * kK + kx) * im.c + c, ii = b * C + (iy * im.w + ix) * im.c + c;
                    dw[wi] += g * in[ii];
                    if (l > 0) din[ii] += g * W[wi];
                  }
                }
            }
      for (size_t i = 0; i < dw.size(); ++i) grads[shape.weight_offset[l] + i] = keep(dw[i]);
      for (size_t i = 0; i < db.size(); ++i) grads[shape.bias_offset[l] + i] = keep(db[i]);
    }
    if (l == 0) break;
    // The gradient of layer l's input as stored, then through layer l-1's activation (where it has one).
    for (long i = 0; i < B * C; ++i) {
      din[i] = keep(din[i]);
      if (shape.has_activation(l - 1)) din[i] = keep(din[i] * activation_grad(f.pre[l - 1][i], cfg.activation));
    }
    d = std::move(din);
  }
  return grads;
}

// AdamW (Loshchilov & Hutter 2019) or SGD with momentum, as torch.optim writes them, on the unscaled gradients; the
// masters and the state are fp32.
void update(const core::TrainConfig& cfg, const Tensor& grads, double unscale, TrainState& s) {
  const long t = ++s.t;
  const double lr = cfg.lr, wd = cfg.effective_weight_decay();
  const double b1 = cfg.beta1, b2 = cfg.beta2, bc1 = 1 - core::integer_power(b1, static_cast<uint64_t>(t)),
               bc2 = 1 - core::integer_power(b2, static_cast<uint64_t>(t));
  for (size_t i = 0; i < grads.size(); ++i) {
    const double g = grads[i] * unscale;
    double& p = s.params[i];
    if (cfg.optimizer == core::Optimizer::AdamW) {
      p -= lr * wd * p;
      s.m[i] = store32(b1 * s.m[i] + (1 - b1) * g);
      s.v[i] = store32(b2 * s.v[i] + (1 - b2) * g * g);
      p = store32(p - lr * (s.m[i] / bc1) / (std::sqrt(s.v[i] / bc2) + cfg.eps));
    } else {
      const double gd = g + wd * p;
      s.m[i] = store32(t == 1 ? gd : cfg.momentum * s.m[i] + gd);
      p = store32(p - lr * s.m[i]);
    }
  }
}

// GradScaler's rule (torch.cuda.amp): an overflow halves the scale (backoff) and skips the step; growth_interval clean
// steps in a row double it, unless that would be inf. Defaults as torch's.
void update_scale(core::LossScalerState& s, bool found_inf) {
  const core::LossScalerOptions o;
  if (found_inf) {
    s.scale = static_cast<float>(double(s.scale) * o.backoff_factor);
    s.growth_tracker = 0;
    s.skipped += 1;
    return;
  }
  if (++s.growth_tracker < o.growth_interval) return;
  const float grown = static_cast<float>(double(s.scale) * o.growth_factor);
  if (std::isfinite(grown)) s.scale = grown;
  s.growth_tracker = 0;
}

Tensor weights_as_read(const TrainState& s, Precision p) {
  Tensor w(s.params.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = store(s.params[i], p);  // the 16-bit copy, or the fp32 masters
  return w;
}

}  // namespace

TrainState initial_state(const core::TrainConfig& cfg, const std::vector<float>& params) {
  TrainState s;
  s.params.assign(params.begin(), params.end());
  s.m.assign(params.size(), 0.0);
  s.v.assign(params.size(), 0.0);
  s.scaler.scale = cfg.loss_scale_init;
  return s;
}

StepResult train_step(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& train,
                      std::span<const uint32_t> rows, TrainState& state) {
  const bool scaling = cfg.precision == Precision::FP16;
  const long B = static_cast<long>(rows.size()), K = shape.classes();
  StepResult r;
  r.loss_scale = scaling ? state.scaler.scale : 0;

  // Forward, loss and its gradient (times the loss scale in fp16: the gradient of scale x loss).
  const Tensor weights = weights_as_read(state, cfg.precision);
  const Forward f = forward(cfg, shape, train, rows, weights);
  std::vector<int32_t> labels(B);
  for (long b = 0; b < B; ++b) labels[b] = train.y[rows[b]];
  Loss loss = softmax_cross_entropy(f.in.back(), labels.data(), B, K, scaling ? state.scaler.scale : 1.0);
  for (double l : loss.losses) r.loss += l / B;
  double largest = 0;
  for (double& d : loss.dlogits) {
    largest = std::max(largest, std::fabs(d));
    d = store(d, cfg.precision);
  }

  // Backward, then the update: skipped in fp16 when a gradient overflowed, else on the unscaled gradients.
  const Tensor grads = backward(cfg, shape, f, weights, loss.dlogits, &largest);
  r.overflow_margin = scaling ? largest / 65504.0 : 0;
  r.skipped = scaling && std::any_of(grads.begin(), grads.end(), [](double g) { return !std::isfinite(g); });
  if (!r.skipped) update(cfg, grads, scaling ? double(1.0f / state.scaler.scale) : 1.0, state);
  if (scaling) update_scale(state.scaler, r.skipped);
  return r;
}

core::EvalResult evaluate(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& test,
                          const TrainState& state) {
  std::vector<uint32_t> rows(static_cast<size_t>(test.count));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint32_t>(i);
  const Forward f = forward(cfg, shape, test, rows, weights_as_read(state, cfg.precision));
  const Loss loss = softmax_cross_entropy(f.in.back(), test.y.data(), test.count, shape.classes(), 1.0);
  core::EvalResult r;
  for (int i = 0; i < test.count; ++i) {
    r.loss += loss.losses[i] / test.count;
    r.accuracy += static_cast<double>(loss.correct[i]) / test.count;
  }
  return r;
}

std::vector<double> logits(const core::TrainConfig& cfg, const core::ModelShape& shape, const core::Dataset& data,
                           std::span<const uint32_t> rows, const TrainState& state) {
  return forward(cfg, shape, data, rows, weights_as_read(state, cfg.precision)).in.back();
}

}  // namespace cpu::reference
