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
// A transformer's layers (ModelShape::transformer) act on each of a sequence's T positions (its rows: B x T):
//   Embedding  out (B*T, C) = wte[token] + wpe[t]: the weight wte (V, C), the "bias" wpe (T, C);
//   Norm       LayerNorm of each row (torch.nn.LayerNorm): the weight its gain (C), the bias its shift (C);
//   Attention  causal multi-head self-attention of the (B*T, 3C) q, k, v side by side -> (B*T, C), no parameters;
//   Residual   out = the branch's output (its input) + the residual stream (ModelShape::skip), no parameters.
enum class LayerKind : uint8_t { Dense, Conv, Pool, Embedding, Norm, Attention, Residual };
const char* to_string(LayerKind k);  // "dense", "conv", "pool", "embedding", "norm", "attention", "residual"

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
  // The data flow between layers. input[l]: the layer whose output layer l reads (-1: the batch); l - 1 for an MLP
  // and a CNN. skip[l]: a Residual's stream (the output it adds its input to), -1 elsewhere. grad[l]: the layer whose
  // gradient tensor holds the gradient of l's output: l itself, or, along a transformer's residual stream, the
  // embedding's (one tensor for the whole stream, as llm.c keeps it: each branch's LayerNorm backward adds its share).
  std::vector<int> input, skip, grad;
  std::vector<uint8_t> activated;     // per layer: followed by the activation (keeps its pre-activation)
  // A transformer's sequences: the positions per sample (T, the context; 1 for an MLP and a CNN, whose rows are the
  // samples), the heads of its attention layers, whether the output projection is the token embedding (GPT-2's tied
  // weights: the head's weight is the embedding's, and it has no bias), and the positions per sample whose targets
  // count in the loss (T for text; the answer's for a task).
  int positions = 1;
  int heads = 0;
  bool tied = false;
  int counted = 0;

  // An MLP: dims = {inputs, hidden..., classes}, every layer dense.
  explicit ModelShape(std::vector<int> dims);
  ModelShape() = default;
  // A CNN on `input` images: per entry of `conv` a convolution to that many channels and a 2x2 max pool, then the
  // dense layers `hidden` and the classifier of `classes`. Throws core::Error(InvalidArgument) when the image is too
  // small for that many pools (each halves it, rounded down; at least 1x1 must remain).
  static ModelShape cnn(Image input, const std::vector<int>& conv, const std::vector<int>& hidden, int classes);
  // A decoder-only transformer (GPT-2's shape; cpu/transformer_reference.hpp is its reference in double) over a
  // vocabulary of `vocab` tokens and sequences of `context` positions: an Embedding; per block Norm, Dense (C -> 3C:
  // q, k, v), Attention, Dense (C -> C), Residual, Norm, Dense (C -> 4C, GELU), Dense (4C -> C), Residual; a final Norm
  // and the output projection Dense (C -> V, no bias; tied: the embedding's weight). `counted`: the positions per
  // sequence whose targets count. Throws core::Error(InvalidArgument) for sizes below 1 or an embedding that is not
  // a multiple of the heads.
  struct TransformerSizes {
    int vocab = 0, context = 0, embed = 0, heads = 0, layers = 0;
    bool tied = true;
    int counted = 0;
  };
  static ModelShape transformer(const TransformerSizes& s);
  bool is_transformer() const { return !kinds.empty() && kinds.front() == LayerKind::Embedding; }
  int embed() const { return is_transformer() ? dims[1] : 0; }  // C, the residual stream's width

  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int inputs() const { return dims.front(); }
  int classes() const { return dims.back(); }
  int fan_in(int layer) const { return dims[layer]; }    // elements per sample into layer l
  int fan_out(int layer) const { return dims[layer + 1]; }
  LayerKind kind(int layer) const { return kinds[static_cast<size_t>(layer)]; }
  bool is_cnn() const;
  // Followed by the activation (and so keeps its pre-activation): every layer but the last and the pools of an MLP
  // and a CNN; a transformer's MLP expansions.
  bool has_activation(int layer) const { return activated[static_cast<size_t>(layer)] != 0; }
  size_t weight_count(int layer) const;  // dense OC x C, conv OC x 3 x 3 x C, pool 0
  size_t bias_count(int layer) const;    // the output channels (features), pool 0
  // The inputs one output of layer l sums over (the initialisation's fan_in): dense C, conv 3 x 3 x C.
  int init_fan_in(int layer) const;
  // Transformer: the layers of one block (ModelShape::transformer), and the block count.
  static constexpr int kBlockLayers = 9;
  int blocks() const { return is_transformer() ? (layers() - 3) / kBlockLayers : 0; }
  // The dense hidden sizes (--hidden) and the convolutions' channels (--conv) this shape was made from.
  std::vector<int> hidden() const;
  std::vector<int> conv_channels() const;
  std::string describe() const;  // e.g. "784-256-128-10", "28x28x1-conv32-pool-conv64-pool-128-10"

 private:
  void lay_out_parameters();
  void connect_chain();  // an MLP's and a CNN's data flow: each layer reads the one before
};

// torch's default initialisation of nn.Linear and nn.Conv2d: W and b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
// fan_in = init_fan_in(l) (the kaiming_uniform with a=sqrt(5) that reset_parameters() uses reduces to this bound).
// Drawn from one core::Pcg32(seed), layer by layer, W in its stored order then b. Padding is zero. Returns
// param_count floats. A transformer: GPT-2's (Radford et al. 2019; the reference's transformer_init): weights
// N(0, 0.02^2), the two projections back into the residual stream N(0, (0.02 / sqrt(2 x blocks))^2), biases 0,
// LayerNorm gains 1 and shifts 0.
std::vector<float> init_parameters(const ModelShape& shape, uint64_t seed);
std::vector<float> init_transformer(const ModelShape& shape, uint64_t seed);  // its transformer case

}  // namespace core
