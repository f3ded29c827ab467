// The MLP's shape, its parameter layout in one flat buffer, and weight initialisation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

enum class Activation { ReLU, GELU };  // GELU: the tanh approximation (Hendrycks & Gimpel 2016; torch approximate='tanh')
enum class Optimizer { SGD, AdamW };

// Storage type of the tensors the kernels read and write (activations, weights as read, gradients); arithmetic and
// accumulation are fp32 in every case, and the optimizer keeps fp32 master weights and state (mixed precision:
// Micikevicius et al. 2018). fp16: IEEE binary16; bf16: bfloat16 (core/half.hpp).
enum class Precision { FP32, FP16, BF16 };

const char* to_string(Activation a);
const char* to_string(Optimizer o);
const char* to_string(Precision p);  // "fp32", "fp16", "bf16"
// "fp32" / "fp16" / "bf16" (exactly, lower case) -> the precision; anything else -> nullopt.
std::optional<Precision> parse_precision(std::string_view name);
// Bytes of one stored tensor element: 4 or 2.
constexpr size_t storage_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

// dims = {inputs, hidden..., classes}; layer l maps dims[l] -> dims[l+1] with weight W_l (OC, C) and bias b_l (OC),
// out = inp · W_lᵀ + b_l (torch.nn.Linear's convention). Every hidden layer is followed by the activation; the last
// layer produces the logits.
//
// All parameters live in one flat float array (the same layout on both backends, and for gradients and optimizer
// state): each tensor starts at a multiple of kParamAlign elements, so that a GPU descriptor can point at it directly
// in every precision: 128 elements are 256 bytes in 16-bit storage (512 in fp32), and 256 bytes is the largest
// minStorageBufferOffsetAlignment the Vulkan spec allows (Vulkan spec, "Required Limits").
struct ModelShape {
  static constexpr size_t kParamAlign = 128;

  std::vector<int> dims;
  std::vector<size_t> weight_offset;  // per layer, in elements
  std::vector<size_t> bias_offset;    // per layer, in elements
  size_t param_count = 0;             // padded total, in elements (size of the flat buffer)
  size_t real_param_count = 0;        // weights + biases, without padding

  explicit ModelShape(std::vector<int> dims);
  ModelShape() = default;

  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int inputs() const { return dims.front(); }
  int classes() const { return dims.back(); }
  int fan_in(int layer) const { return dims[layer]; }
  int fan_out(int layer) const { return dims[layer + 1]; }
  std::string describe() const;  // e.g. "784-256-128-10"
};

// torch.nn.Linear's default initialisation: W and b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (the kaiming_uniform
// with a=sqrt(5) that reset_parameters() uses reduces to this bound). Drawn from one core::Pcg32(seed), layer by layer,
// W row-major then b. Padding is zero. Returns param_count floats.
std::vector<float> init_parameters(const ModelShape& shape, uint64_t seed);

}  // namespace core
