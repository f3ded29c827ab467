// ModelShape layout and torch.nn.Linear-style initialisation.
#include "core/model.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace core {

const char* to_string(Activation a) { return a == Activation::ReLU ? "relu" : "gelu"; }
const char* to_string(Optimizer o) { return o == Optimizer::SGD ? "sgd" : "adamw"; }

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

ModelShape::ModelShape(std::vector<int> d) : dims(std::move(d)) {
  if (dims.size() < 2) throw Error(ErrorKind::Internal, "ModelShape needs at least inputs and classes");
  size_t offset = 0;
  for (int l = 0; l < layers(); ++l) {
    size_t w = static_cast<size_t>(fan_in(l)) * fan_out(l);
    weight_offset.push_back(offset);
    offset = align_up(offset + w, kParamAlign);
    bias_offset.push_back(offset);
    offset = align_up(offset + fan_out(l), kParamAlign);
    real_param_count += w + fan_out(l);
  }
  param_count = offset;
}

std::string ModelShape::describe() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += '-';
    s += std::to_string(dims[i]);
  }
  return s;
}

std::vector<float> init_parameters(const ModelShape& shape, uint64_t seed) {
  std::vector<float> params(shape.param_count, 0.0f);
  Pcg32 rng(seed);
  for (int l = 0; l < shape.layers(); ++l) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(shape.fan_in(l)));
    const size_t w = static_cast<size_t>(shape.fan_in(l)) * shape.fan_out(l);
    for (size_t i = 0; i < w; ++i) params[shape.weight_offset[l] + i] = rng.uniform(-bound, bound);
    for (int i = 0; i < shape.fan_out(l); ++i) params[shape.bias_offset[l] + i] = rng.uniform(-bound, bound);
  }
  return params;
}

}  // namespace core
