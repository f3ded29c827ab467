// The model's shape (an MLP, or a CNN: 3x3 convolutions, each followed by the activation and a 2x2 max pool, then
// dense layers), its parameter layout in one flat buffer, and weight initialisation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// The hidden layers' activation. GELU: the tanh approximation (Hendrycks & Gimpel 2016; torch approximate='tanh');
// SiLU (swish): x sigmoid(x) (Elfwing et al. 2018; Ramachandran et al. 2017; torch.nn.SiLU). Every place that acts
// on it is an exhaustive switch, so that a new value is a compile error wherever it is not handled yet.
enum class Activation { ReLU, GELU, SiLU };
inline constexpr Activation kActivations[] = {Activation::ReLU, Activation::GELU, Activation::SiLU};
enum class Optimizer { SGD, AdamW };

// Storage type of the tensors the kernels read and write (activations, weights as read, gradients); arithmetic and
// accumulation are fp32 in every case, and the optimizer keeps fp32 master weights and state (mixed precision:
// Micikevicius et al. 2018). fp16: IEEE binary16; bf16: bfloat16 (core/half.hpp).
enum class Precision { FP32, FP16, BF16 };

const char* to_string(Activation a);  // "relu", "gelu", "silu": the spelling of the CLI, lessons and the report
// One of to_string(Activation)'s spellings (exactly) -> the activation; anything else -> nullopt.
std::optional<Activation> parse_activation(std::string_view name);
std::vector<std::string> activation_names();  // every spelling, in kActivations' order
const char* to_string(Optimizer o);
const char* to_string(Precision p);  // "fp32", "fp16", "bf16"
// "fp32" / "fp16" / "bf16" (exactly, lower case) -> the precision; anything else -> nullopt.
std::optional<Precision> parse_precision(std::string_view name);
// Bytes of one stored tensor element: 4 or 2.
constexpr size_t storage_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

// What a layer is:
//   Dense  out (B,OC) = inp (B,C) · Wᵀ + b, W (OC,C) (torch.nn.Linear);
//   Conv   out (B,H,W,OC) = conv(inp (B,H,W,C), W (OC,3,3,C)) + b (OC): a 3x3 convolution, stride 1, padding 1, so
//          the image keeps its size (torch.nn.Conv2d(C, OC, 3, padding=1)); NHWC activations (channel fastest);
//   Pool   2x2 max pooling, stride 2 (torch.nn.MaxPool2d(2)): (B,H,W,C) -> (B,H/2,W/2,C), no parameters.
// Every layer but the last and the pools is followed by the activation. A dense layer after an image reads it
// flattened as stored (B, H*W*C).
enum class LayerKind : uint8_t { Dense, Conv, Pool };
const char* to_string(LayerKind k);  // "dense", "conv", "pool"

// A tensor between layers, per sample: c channels of h x w pixels (a dense layer's: c features, 1 x 1).
struct Image {
  int c = 0, h = 1, w = 1;
  int size() const { return c * h * w; }
  bool operator==(const Image&) const = default;
};

// dims = the elements per sample at each layer boundary: {inputs, each layer's output...}; layer l maps dims[l] ->
// dims[l+1]. All parameters live in one flat float array (the same layout on both backends, and for gradients and
// optimizer state): each tensor starts at a multiple of kParamAlign elements, so that a GPU descriptor can point at
// it directly in every precision: 128 elements are 256 bytes in 16-bit storage (512 in fp32), and 256 bytes is the
// largest minStorageBufferOffsetAlignment the Vulkan spec allows (Vulkan spec, "Required Limits"). A pool layer has
// no parameters (offsets 0, counts 0).
struct ModelShape {
  static constexpr size_t kParamAlign = 128;
  static constexpr int kConvKernel = 3, kConvPad = 1;  // the convolutions' kernel size and zero padding

  std::vector<int> dims;
  std::vector<LayerKind> kinds;       // per layer
  std::vector<Image> images;          // per boundary, images[i].size() == dims[i]
  std::vector<size_t> weight_offset;  // per layer, in elements
  std::vector<size_t> bias_offset;    // per layer, in elements
  size_t param_count = 0;             // padded total, in elements (size of the flat buffer)
  size_t real_param_count = 0;        // weights + biases, without padding

  // An MLP: dims = {inputs, hidden..., classes}, every layer dense.
  explicit ModelShape(std::vector<int> dims);
  ModelShape() = default;
  // A CNN on `input` images: per entry of `conv` a convolution to that many channels and a 2x2 max pool, then the
  // dense layers `hidden` and the classifier of `classes`. Throws core::Error(InvalidArgument) when the image is too
  // small for that many pools (each halves it, rounded down; at least 1x1 must remain).
  static ModelShape cnn(Image input, const std::vector<int>& conv, const std::vector<int>& hidden, int classes);

  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int inputs() const { return dims.front(); }
  int classes() const { return dims.back(); }
  int fan_in(int layer) const { return dims[layer]; }    // elements per sample into layer l
  int fan_out(int layer) const { return dims[layer + 1]; }
  LayerKind kind(int layer) const { return kinds[static_cast<size_t>(layer)]; }
  bool is_cnn() const;
  // Followed by the activation (and so keeps its pre-activation): every layer but the last and the pools.
  bool has_activation(int layer) const { return layer < layers() - 1 && kind(layer) != LayerKind::Pool; }
  size_t weight_count(int layer) const;  // dense OC x C, conv OC x 3 x 3 x C, pool 0
  size_t bias_count(int layer) const;    // the output channels (features), pool 0
  // The inputs one output of layer l sums over (the initialisation's fan_in): dense C, conv 3 x 3 x C.
  int init_fan_in(int layer) const;
  // The dense hidden sizes (--hidden) and the convolutions' channels (--conv) this shape was made from.
  std::vector<int> hidden() const;
  std::vector<int> conv_channels() const;
  std::string describe() const;  // e.g. "784-256-128-10", "28x28x1-conv32-pool-conv64-pool-128-10"

 private:
  void lay_out_parameters();
};

// torch's default initialisation of nn.Linear and nn.Conv2d: W and b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
// fan_in = init_fan_in(l) (the kaiming_uniform with a=sqrt(5) that reset_parameters() uses reduces to this bound).
// Drawn from one core::Pcg32(seed), layer by layer, W in its stored order then b. Padding is zero. Returns
// param_count floats.
std::vector<float> init_parameters(const ModelShape& shape, uint64_t seed);

}  // namespace core
