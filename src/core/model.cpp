// ModelShape: the layers (MLP or CNN), the parameter layout, and torch-style initialisation.
#include "core/model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace core {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::ReLU: return "relu";
    case Activation::GELU: return "gelu";
    case Activation::SiLU: return "silu";
  }
  return "?";
}

std::optional<Activation> parse_activation(std::string_view name) {
  for (Activation a : kActivations)
    if (name == to_string(a)) return a;
  return std::nullopt;
}

std::vector<std::string> activation_names() {
  std::vector<std::string> names;
  for (Activation a : kActivations) names.emplace_back(to_string(a));
  return names;
}
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

const char* to_string(LayerKind k) {
  switch (k) {
    case LayerKind::Dense: return "dense";
    case LayerKind::Conv: return "conv";
    case LayerKind::Pool: return "pool";
    case LayerKind::Embedding: return "embedding";
    case LayerKind::Norm: return "norm";
    case LayerKind::Attention: return "attention";
    case LayerKind::Residual: return "residual";
  }
  return "?";
}

ModelShape::ModelShape(std::vector<int> d) : dims(std::move(d)) {
  if (dims.size() < 2) throw Error(ErrorKind::Internal, "ModelShape needs at least inputs and classes");
  kinds.assign(dims.size() - 1, LayerKind::Dense);
  for (int n : dims) images.push_back({n, 1, 1});
  connect_chain();
  lay_out_parameters();
}

ModelShape ModelShape::cnn(Image input, const std::vector<int>& conv, const std::vector<int>& hidden, int classes) {
  ModelShape s;
  s.images.push_back(input);
  for (int channels : conv) {
    Image in = s.images.back();
    s.kinds.push_back(LayerKind::Conv);
    s.images.push_back({channels, in.h, in.w});  // padding 1 keeps the size
    if (in.h < 2 || in.w < 2) {
      size_t most = 0;
      for (int h = input.h, w = input.w; h >= 2 && w >= 2; h /= 2, w /= 2) ++most;
      if (most == 0)  // "use at most 0" was the advice (issue 34)
        throw Error(ErrorKind::InvalidArgument,
                    fmt::format("--model cnn: the {}x{} images are too small for any convolution (each is followed "
                                "by a 2x2 max pool, which needs at least 2x2 pixels); use --model mlp",
                                input.h, input.w));
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("--conv: {} convolutions would pool the {}x{} images below 1x1 (each pool halves them); "
                              "use at most {}",
                              conv.size(), input.h, input.w, most));
    }
    s.kinds.push_back(LayerKind::Pool);
    s.images.push_back({channels, in.h / 2, in.w / 2});
  }
  for (int h : hidden) {
    s.kinds.push_back(LayerKind::Dense);
    s.images.push_back({h, 1, 1});
  }
  s.kinds.push_back(LayerKind::Dense);
  s.images.push_back({classes, 1, 1});
  for (const Image& i : s.images) s.dims.push_back(i.size());
  s.connect_chain();
  s.lay_out_parameters();
  return s;
}

void ModelShape::connect_chain() {
  for (int l = 0; l < layers(); ++l) {
    input.push_back(l - 1);
    skip.push_back(-1);
    grad.push_back(l);
    activated.push_back(l < layers() - 1 && kind(l) != LayerKind::Pool ? 1 : 0);
  }
}

void ModelShape::lay_out_parameters() {
  size_t offset = 0;
  for (int l = 0; l < layers(); ++l) {
    if (tied && l == layers() - 1) {  // the output projection reads the token embedding: no tensor of its own
      weight_offset.push_back(weight_offset[0]);
      bias_offset.push_back(0);
      continue;
    }
    const size_t w = weight_count(l), b = bias_count(l);
    weight_offset.push_back(w ? offset : 0);
    offset = align_up(offset + w, kParamAlign);
    bias_offset.push_back(b ? offset : 0);
    offset = align_up(offset + b, kParamAlign);
    real_param_count += w + b;
  }
  param_count = offset;
}

bool ModelShape::is_cnn() const {
  for (LayerKind k : kinds)
    if (k == LayerKind::Conv) return true;
  return false;
}

size_t ModelShape::weight_count(int l) const {
  switch (kind(l)) {
    case LayerKind::Dense: return static_cast<size_t>(fan_in(l)) * static_cast<size_t>(fan_out(l));
    case LayerKind::Conv: return static_cast<size_t>(images[l + 1].c) * static_cast<size_t>(init_fan_in(l));
    case LayerKind::Embedding: return static_cast<size_t>(classes()) * static_cast<size_t>(fan_out(l));  // wte (V, C)
    case LayerKind::Norm: return static_cast<size_t>(fan_out(l));  // the gain
    case LayerKind::Pool:
    case LayerKind::Attention:
    case LayerKind::Residual: return 0;
  }
  return 0;
}

size_t ModelShape::bias_count(int l) const {
  switch (kind(l)) {
    case LayerKind::Dense:  // a transformer's output projection has none
      return is_transformer() && l == layers() - 1 ? 0 : static_cast<size_t>(images[l + 1].c);
    case LayerKind::Conv:
    case LayerKind::Norm: return static_cast<size_t>(images[l + 1].c);
    case LayerKind::Embedding: return static_cast<size_t>(positions) * static_cast<size_t>(fan_out(l));  // wpe (T, C)
    case LayerKind::Pool:
    case LayerKind::Attention:
    case LayerKind::Residual: return 0;
  }
  return 0;
}

int ModelShape::init_fan_in(int l) const {
  return kind(l) == LayerKind::Conv ? kConvKernel * kConvKernel * images[l].c : fan_in(l);
}

std::vector<int> ModelShape::hidden() const {
  std::vector<int> out;
  for (int l = 0; l + 1 < layers(); ++l)
    if (kind(l) == LayerKind::Dense) out.push_back(fan_out(l));
  return out;
}

std::vector<int> ModelShape::conv_channels() const {
  std::vector<int> out;
  for (int l = 0; l < layers(); ++l)
    if (kind(l) == LayerKind::Conv) out.push_back(images[l + 1].c);
  return out;
}

std::string ModelShape::describe() const {
  if (is_transformer())
    return fmt::format("transformer {} blocks, embed {}, {} heads, context {}, vocab {}", blocks(), embed(), heads,
                       positions, classes());
  std::string s;
  if (is_cnn()) s = fmt::format("{}x{}x{}", images[0].h, images[0].w, images[0].c);
  else s = std::to_string(dims[0]);
  for (int l = 0; l < layers(); ++l) {
    s += '-';
    if (kind(l) == LayerKind::Conv) s += "conv" + std::to_string(images[l + 1].c);
    else if (kind(l) == LayerKind::Pool) s += "pool";
    else s += std::to_string(dims[l + 1]);
  }
  return s;
}

std::vector<float> init_parameters(const ModelShape& shape, uint64_t seed) {
  if (shape.is_transformer()) return init_transformer(shape, seed);
  std::vector<float> params(shape.param_count, 0.0f);
  Pcg32 rng(seed);
  for (int l = 0; l < shape.layers(); ++l) {
    if (shape.kind(l) == LayerKind::Pool) continue;
    const float bound = 1.0f / std::sqrt(static_cast<float>(shape.init_fan_in(l)));
    for (size_t i = 0; i < shape.weight_count(l); ++i) params[shape.weight_offset[l] + i] = rng.uniform(-bound, bound);
    for (size_t i = 0; i < shape.bias_count(l); ++i) params[shape.bias_offset[l] + i] = rng.uniform(-bound, bound);
  }
  return params;
}

}  // namespace core
