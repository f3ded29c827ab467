// TrainConfig: every setting of a training run, with its defaults and its validation.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dataset.hpp"
#include "core/input.hpp"
#include "core/model.hpp"

namespace core {

// TrainConfig::weight_decay's "not given": the optimizer's default. Any other value must be in [0, 1].
inline constexpr float kOptimizerWeightDecay = -1.0f;

// TrainConfig::epochs meaning "train until stopped" (the dashboard without --epochs).
inline constexpr int kUntilStopped = 0;

// The teaching toggles: the same math run another way, to show what an execution choice costs. Each is a real change
// of what runs (the losses stay bit-identical in fp32; see docs/training.md, "Teaching toggles").
struct Execution {
  // Bias add and activation as kernels of their own after the GEMM (bias_add, act_forward), each reading and writing
  // the layer's whole output again, instead of matmul_forward's fused epilogue.
  bool unfused = false;
  // GPU: wait for the device and read the loss back after every step (PyTorch's `loss.item()` in the loop) instead
  // of reading back every readback_interval steps. CPU: its loss is on the host after every step anyway.
  bool sync_every_step = false;
  // GPU: one queue submission and host wait per kernel instead of one command buffer per step. CPU: every kernel is
  // already its own thread-pool dispatch that the trainer waits for (it has no loops fused across kernels).
  bool submit_per_kernel = false;
  // A transformer's attention as three kernels with the (B, heads, T, T) scores in memory (scores, softmax, values;
  // --attention naive) instead of the fused kernel that never stores them (FlashAttention's idea; the default).
  bool naive_attention = false;

  enum class Toggle { Unfused, SyncEveryStep, SubmitPerKernel, NaiveAttention };
  bool& operator[](Toggle t) {
    switch (t) {
      case Toggle::Unfused: return unfused;
      case Toggle::SyncEveryStep: return sync_every_step;
      case Toggle::SubmitPerKernel: return submit_per_kernel;
      case Toggle::NaiveAttention: return naive_attention;
    }
    return unfused;
  }
  bool operator[](Toggle t) const { return const_cast<Execution&>(*this)[t]; }
  bool any() const { return unfused || sync_every_step || submit_per_kernel || naive_attention; }
  bool operator==(const Execution&) const = default;
};
// Every teaching toggle, in the order the Controls and the summaries list them.
inline constexpr std::array<Execution::Toggle, 4> kToggles{Execution::Toggle::Unfused, Execution::Toggle::SyncEveryStep,
                                                           Execution::Toggle::SubmitPerKernel,
                                                           Execution::Toggle::NaiveAttention};
const char* to_string(Execution::Toggle t);  // "unfused", "sync every step", "submit per kernel", "naive attention"
// "fused", "unfused, sync every step, submit per kernel", ...: the toggles that are on ("fused" when none is).
std::string to_string(const Execution& e);

// The model trainscope trains: an MLP (dense layers), or a CNN (3x3 convolutions, each followed by the activation and
// a 2x2 max pool, then the dense layers; core/model.hpp).
// Or a decoder-only transformer on sequences of tokens (ModelShape::transformer; needs token data).
enum class ModelKind { MLP, CNN, Transformer };
const char* to_string(ModelKind m);  // "mlp", "cnn", "transformer"
// Whether `dataset` (TrainConfig::dataset) is token data, sequences for the transformer: "reverse" or "fortunes".
inline bool token_data(std::string_view dataset) { return dataset == "reverse" || dataset == "fortunes"; }

struct TrainConfig {
  // Data
  std::string dataset = "fashion-mnist";  // fashion-mnist | spiral | reverse | fortunes
  std::string data_dir;                   // empty: kDefaultFashionMnistDir
  int limit = 0;                          // use only the first N training samples (0: all)
  int spiral_classes = 3;
  int spiral_points = 2000;               // training points per class (test: a quarter of that)
  float spiral_noise = 0.02f;            // 0.02 keeps the arms apart (learnable); 0.1 blurs them to ~65% at best
  // random (the seed-mlp preset): inputs and labels drawn at random (core::make_random)
  int random_features = 1024;
  int random_classes = 10;
  int random_samples = 10240;            // training samples (test: a tenth)

  // Model
  ModelKind model = ModelKind::MLP;
  std::vector<int> conv = {32, 64};  // CNN: each 3x3 convolution's output channels (each followed by a 2x2 max pool)
  std::vector<int> hidden = {256, 128};
  // Transformer: its blocks, the heads of each attention, the residual stream's width (a multiple of the heads).
  int layers = 2, heads = 4, embed = 64;
  // Token data (--dataset reverse | fortunes): the positions of each sequence (the reversal task: context / 2 digits
  // and their reverse), and the sequences of the reversal task drawn for training (test: a tenth).
  int context = 32;
  int reverse_samples = 20000;
  Activation activation = Activation::ReLU;

  // Optimisation
  Optimizer optimizer = Optimizer::AdamW;
  float lr = 1e-3f;
  float momentum = 0.9f;        // SGD only (torch.optim.SGD semantics, dampening 0)
  float weight_decay = kOptimizerWeightDecay;  // the optimizer's default (AdamW 0.01, SGD 0), or 0..1
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // torch.optim.AdamW defaults
  int batch = 128;
  int epochs = 3;               // 0 (kUntilStopped): until stopped, the dashboard's default; `train` needs a number
  // Mixed precision: the storage type of activations, weights as read and gradients (fp32 master weights and
  // optimizer state in every case). fp16 uses dynamic loss scaling starting at loss_scale_init (GradScaler's 2^16).
  Precision precision = Precision::FP32;
  float loss_scale_init = 65536.0f;
  uint64_t seed = 42;

  // Execution
  std::vector<std::string> backends = {"gpu", "cpu"};
  bool sequential = false;
  int threads = 0;              // CPU threads, 0: all hardware threads
  int device = -1;              // Vulkan device index, -1: best (discrete > integrated > virtual > cpu)
  int readback_interval = 10;   // GPU: losses and timestamps are read back every N steps (and at epoch end)
  bool validation = false;      // enable VK_LAYER_KHRONOS_validation
  Execution execution;          // the teaching toggles (--unfused, --sync-every-step, --submit-per-kernel)
  InputPipeline input;          // where batches come from (--input, --augment, --loader-threads, --prefetch, --pageable)

  float effective_weight_decay() const;
};

// The largest head size (--embed / --heads) of the fused attention kernels (their MAX_D).
inline constexpr int kMaxHeadSize = 64;

// Checks every field that does not need the data against core::rules (core/options.hpp: NaN, sign and range), the
// names of the dataset and backends. The command line, the dashboard's controls and lesson scripts all come here.
// Throws core::Error(InvalidArgument) with one line saying what is wrong and what is allowed.
void validate(const TrainConfig& c);

// The model that c trains on `data`: the MLP {features, c.hidden..., classes}, or the CNN of c.conv and c.hidden on
// the data's images. Holds only sizes and offsets. Throws core::Error(InvalidArgument) for a CNN on data without
// images (the spiral) or with more convolutions than its images can be pooled.
ModelShape model_shape(const TrainConfig& c, const DataSplit& data);

// Checks that need the dataset: batch <= training set size, and a model whose fp32 training state (weights,
// gradients, optimizer state, activations: core::tensor_layout in fp32) fits in kMaxTrainingBytes, so that an absurd
// --hidden or --batch is refused with a message instead of failing an allocation later.
void validate_against_data(const TrainConfig& c, const DataSplit& data);

inline constexpr double kMaxTrainingBytes = 16.0 * (1ull << 30);  // 16 GiB

// "256,128" -> {256,128}; throws core::Error(InvalidArgument) on empty, zero, negative or non-numeric sizes.
std::vector<int> parse_hidden(const std::string& text);
// "32,64" -> {32, 64}: --conv, each 1..1024 (core::rules::conv). Throws core::Error(InvalidArgument) as parse_hidden.
std::vector<int> parse_conv(const std::string& text);
// {256,128} -> "256,128" (the inverse of parse_hidden).
std::string hidden_text(const std::vector<int>& hidden);

}  // namespace core
