// The helpers the kernel files share (declared in cpu/ops/op.hpp): the reference's activation in double, and the
// fp16 loss scaler's state as the reference holds it and as the optimizers read it.
#include <cmath>

#include "cpu/ops/op.hpp"

namespace cpu::ops {

namespace {
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }  // exp(-x) = inf for x < -709: exactly 0, no NaN
}  // namespace

double ref_activation(double x, core::Activation act) {
  switch (act) {
    case core::Activation::ReLU: return x > 0 ? x : 0;
    case core::Activation::GELU: return 0.5 * x * (1 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x)));
    case core::Activation::SiLU: return x * sigmoid(x);
  }
  return 0;
}

double ref_activation_derivative(double x, core::Activation act) {
  switch (act) {
    case core::Activation::ReLU: return x > 0 ? 1 : 0;
    case core::Activation::GELU: {
      const double u = kGeluScale * (x + kGeluCubic * x * x * x);
      const double du = kGeluScale * (1 + 3 * kGeluCubic * x * x);
      const double t = std::tanh(u);
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
    }
    case core::Activation::SiLU: {
      const double s = sigmoid(x);
      return s * (1 + x * (1 - s));
    }
  }
  return 0;
}

core::LossScalerBuffer scaler_of(const std::vector<double>& v) {
  core::LossScalerBuffer s{};
  s.scale = static_cast<float>(v.at(0));
  s.growth_tracker = static_cast<uint32_t>(v.at(1));
  s.skipped = static_cast<uint32_t>(v.at(2));
  s.found_inf = static_cast<uint32_t>(v.at(3));
  s.optimizer_steps = static_cast<uint32_t>(v.at(4));
  s.beta1_pow = static_cast<float>(v.at(5));
  s.beta2_pow = static_cast<float>(v.at(6));
  return s;
}

void store_scaler(std::vector<double>& v, const core::LossScalerBuffer& s) {
  v = {s.scale, double(s.growth_tracker), double(s.skipped), double(s.found_inf), double(s.optimizer_steps),
       s.beta1_pow, s.beta2_pow, double(s.reserved)};
}

Unscale unscale(const core::LossScalerBuffer* s, long t) {
  if (!s) return {false, 1.0f, t};
  return {s->found_inf != 0, 1.0f / s->scale, static_cast<long>(s->optimizer_steps) + 1};
}

}  // namespace cpu::ops
