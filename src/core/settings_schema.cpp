// The settings schema's rows (core/settings_schema.hpp) and the parsing, checking and writing of a row's value.
#include "core/settings_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace core {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::InvalidArgument, message); }

std::vector<std::string> datasets() { return {"fashion-mnist", "spiral", "reverse", "fortunes"}; }
std::vector<std::string> models() {
  return {to_string(ModelKind::MLP), to_string(ModelKind::CNN), to_string(ModelKind::Transformer)};
}
std::vector<std::string> optimizers() { return {to_string(Optimizer::SGD), to_string(Optimizer::AdamW)}; }
std::vector<std::string> precisions() {
  return {to_string(Precision::FP32), to_string(Precision::FP16), to_string(Precision::BF16)};
}
std::vector<std::string> backends() { return {"gpu", "cpu"}; }
std::vector<std::string> attention_forms() { return {"fused", "naive"}; }  // Execution::naive_attention false, true
std::vector<std::string> input_sources() { return {to_string(InputSource::Device), to_string(InputSource::Host)}; }

// A Choice row's spelling -> the enum, by its place in the list (the lists above are in the enums' order).
template <typename Enum>
Enum nth(std::vector<std::string> (*choices)(), const SettingValue& v) {
  const auto names = choices();
  const auto at = std::find(names.begin(), names.end(), std::get<std::string>(v));
  return static_cast<Enum>(at - names.begin());
}

// The accessors of one TrainConfig field, by its type (the lambdas convert without capture: plain functions).
#define TS_INT(field)                                                                  \
  [](const TrainConfig& c) { return SettingValue(static_cast<long long>(c.field)); }, \
      [](TrainConfig& c, const SettingValue& v) { c.field = static_cast<int>(std::get<long long>(v)); }
#define TS_REAL(field)                                                              \
  [](const TrainConfig& c) { return SettingValue(static_cast<double>(c.field)); }, \
      [](TrainConfig& c, const SettingValue& v) { c.field = static_cast<float>(std::get<double>(v)); }
#define TS_FLAG(field)                                       \
  [](const TrainConfig& c) { return SettingValue(c.field); }, \
      [](TrainConfig& c, const SettingValue& v) { c.field = std::get<bool>(v); }
#define TS_ENUM(field, Enum, list)                                                      \
  [](const TrainConfig& c) { return SettingValue(std::string(to_string(c.field))); }, \
      [](TrainConfig& c, const SettingValue& v) { c.field = nth<Enum>(list, v); }

using T = SettingType;
using C = SettingChange;

const std::array kRows = {
    // Data
    Setting{"dataset", "--dataset", "Data",
            "Dataset: fashion-mnist, spiral; for --model transformer: reverse (reverse a string of digits) or "
            "fortunes (text of Debian's fortunes package, a byte per token)",
            T::Choice, C::Reset, nullptr, nullptr, datasets, {}, {},
            [](const TrainConfig& c) { return SettingValue(c.dataset); },
            [](TrainConfig& c, const SettingValue& v) { c.dataset = std::get<std::string>(v); }},
    Setting{"data_dir", "--data", "Data", "Directory with the Fashion-MNIST (or MNIST) IDX files, .gz or plain",
            T::Text, C::Start, nullptr, nullptr, nullptr, kDefaultFashionMnistDir, "DIR",
            [](const TrainConfig& c) { return SettingValue(c.data_dir); },
            [](TrainConfig& c, const SettingValue& v) { c.data_dir = std::get<std::string>(v); }},
    Setting{"limit", "--limit", "Data",
            "Use only the first N training samples, and at most N test samples of IDX files (0: all)", T::Int,
            C::Start, &rules::limit, nullptr, nullptr, {}, "N", TS_INT(limit)},
    Setting{"spiral_classes", "--spiral-classes", "Data", "Spiral dataset: number of arms (classes), 2..16", T::Int,
            C::Reset, &rules::spiral_classes, nullptr, nullptr, {}, {}, TS_INT(spiral_classes)},
    Setting{"spiral_points", "--spiral-points", "Data", "Spiral dataset: training points per class (test: a quarter)",
            T::Int, C::Reset, &rules::spiral_points, nullptr, nullptr, {}, {}, TS_INT(spiral_points)},
    Setting{"spiral_noise", "--spiral-noise", "Data", "Spiral dataset: noise, standard deviation in radii, 0..1",
            T::Real, C::Reset, nullptr, &rules::spiral_noise, nullptr, {}, {}, TS_REAL(spiral_noise)},
    // Model
    Setting{"model", "--model", "Model",
            "The model: mlp (dense layers), cnn (3x3 convolutions, each followed by the activation and a 2x2 max "
            "pool, then the --hidden dense layers; needs image data: fashion-mnist) or transformer (a decoder-only "
            "transformer, GPT-2's shape: --layers, --heads, --embed; needs token data: reverse or fortunes)",
            T::Choice, C::Reset, nullptr, nullptr, models, {}, {}, TS_ENUM(model, ModelKind, models)},
    Setting{"layers", "--layers", "Model", "Transformer: its blocks (attention and MLP), 1..64", T::Int, C::Reset,
            &rules::layers, nullptr, nullptr, {}, {}, TS_INT(layers)},
    Setting{"heads", "--heads", "Model",
            "Transformer: the attention heads; --embed / --heads is the head size, at most 64", T::Int, C::Reset,
            &rules::heads, nullptr, nullptr, {}, {}, TS_INT(heads)},
    Setting{"embed", "--embed", "Model", "Transformer: the residual stream's width, a multiple of --heads", T::Int,
            C::Reset, &rules::embed, nullptr, nullptr, {}, {}, TS_INT(embed)},
    Setting{"context", "--context", "Data",
            "Token data: the positions of each sequence (reverse: --context / 2 digits, then their reverse)", T::Int,
            C::Reset, &rules::context, nullptr, nullptr, {}, {}, TS_INT(context)},
    Setting{"conv", "--conv", "Model",
            "CNN (--model cnn only): each convolution's output channels, comma-separated, each 1..1024", T::Sizes,
            C::Reset, &rules::conv, nullptr, nullptr, {}, "N[,N...]",
            [](const TrainConfig& c) { return SettingValue(c.conv); },
            [](TrainConfig& c, const SettingValue& v) { c.conv = std::get<std::vector<int>>(v); }},
    Setting{"hidden", "--hidden", "Model", "Hidden layer sizes, comma-separated, each 1..65536", T::Sizes, C::Reset,
            &rules::hidden, nullptr, nullptr, "mlp 256,128; cnn 128", "N[,N...]",
            [](const TrainConfig& c) { return SettingValue(c.hidden); },
            [](TrainConfig& c, const SettingValue& v) { c.hidden = std::get<std::vector<int>>(v); }},
    Setting{"activation", "--activation", "Model",
            "Activation of the hidden layers: relu, gelu (the tanh approximation) or silu (x sigmoid(x))", T::Choice,
            C::Reset, nullptr, nullptr, activation_names, {}, {},
            [](const TrainConfig& c) { return SettingValue(std::string(to_string(c.activation))); },
            [](TrainConfig& c, const SettingValue& v) {
              c.activation = *parse_activation(std::get<std::string>(v));
            }},
    // Optimisation
    Setting{"optimizer", "--optimizer", "Optimisation", "Optimizer (as torch.optim.SGD / torch.optim.AdamW)",
            T::Choice, C::Live, nullptr, nullptr, optimizers, {}, {}, TS_ENUM(optimizer, Optimizer, optimizers)},
    Setting{"lr", "--lr", "Optimisation", "Learning rate, > 0 and <= 10", T::Real, C::Live, nullptr, &rules::lr,
            nullptr, {}, {}, TS_REAL(lr)},
    Setting{"momentum", "--momentum", "Optimisation", "SGD momentum, in [0, 1)", T::Real, C::Start, nullptr,
            &rules::momentum, nullptr, {}, {}, TS_REAL(momentum)},
    Setting{"weight_decay", "--weight-decay", "Optimisation", "Decoupled weight decay, 0..1", T::Real, C::Start,
            nullptr, &rules::weight_decay, nullptr, "the optimizer's: adamw 0.01, sgd 0", {},
            [](const TrainConfig& c) { return SettingValue(static_cast<double>(c.effective_weight_decay())); },
            [](TrainConfig& c, const SettingValue& v) { c.weight_decay = static_cast<float>(std::get<double>(v)); }},
    Setting{"precision", "--precision", "Optimisation",
            "Storage type of weights, activations and gradients (mixed precision: fp32 accumulation, fp32 master "
            "weights and optimizer state; fp16 with dynamic loss scaling)",
            T::Choice, C::Live, nullptr, nullptr, precisions, {}, {}, TS_ENUM(precision, Precision, precisions)},
    Setting{"loss_scale_init", "--loss-scale", "Optimisation",
            "fp16: initial loss scale (halved after an overflow, doubled after 2000 clean steps), >= 1", T::Real,
            C::Start, nullptr, &rules::loss_scale, nullptr, {}, {}, TS_REAL(loss_scale_init)},
    Setting{"batch", "--batch", "Optimisation", "Batch size, 1..65536 and at most the training set size", T::Int,
            C::Live, &rules::batch, nullptr, nullptr, {}, {}, TS_INT(batch)},
    Setting{"epochs", "--epochs", "Optimisation", "Epochs, 1..10000", T::Int, C::Start, &rules::epochs, nullptr,
            nullptr, {}, {}, TS_INT(epochs)},
    Setting{"seed", "--seed", "Optimisation", "Seed of the weights, the batch order and the spiral, 0..2^64-1",
            T::Seed, C::Reset, nullptr, nullptr, nullptr, {}, {},
            [](const TrainConfig& c) { return SettingValue(c.seed); },
            [](TrainConfig& c, const SettingValue& v) { c.seed = std::get<uint64_t>(v); }},
    // Execution
    Setting{"backends", "--backend", "Execution", "Backends to train, comma-separated: gpu, cpu or gpu,cpu",
            T::Names, C::Start, nullptr, nullptr, backends, {}, "NAME[,NAME]",
            [](const TrainConfig& c) { return SettingValue(c.backends); },
            [](TrainConfig& c, const SettingValue& v) { c.backends = std::get<std::vector<std::string>>(v); }},
    Setting{"sequential", "--sequential", "Execution",
            "Run the backends one after the other instead of at once (undisturbed timings)", T::Flag, C::Start,
            nullptr, nullptr, nullptr, {}, {}, TS_FLAG(sequential)},
    Setting{"threads", "--threads", "Execution",
            "CPU backend threads, 0..1024 (0: all hardware threads); more threads than the system lets trainscope "
            "start (a pids cgroup, ulimit -u) are refused before training",
            T::Int, C::Live, &rules::threads, nullptr, nullptr, {}, "N", TS_INT(threads)},
    Setting{"device", "--device", "Execution", "Vulkan device index from `trainscope devices` (-1: the best one)",
            T::Int, C::Start, &rules::device, nullptr, nullptr, {}, "N", TS_INT(device)},
    Setting{"readback_interval", "--readback", "Execution",
            "Read losses and GPU timestamps back every N steps, 1..1000 (with --input host, pinned: also the batches "
            "staged at once, one buffer the device must be able to allocate)",
            T::Int, C::Start, &rules::readback, nullptr, nullptr, {}, "N", TS_INT(readback_interval)},
    Setting{"validation", "--validation", "Execution",
            "Enable the Vulkan validation layer (VK_LAYER_KHRONOS_validation with synchronization validation; "
            "slow); at the end every distinct message once with its count, and any message fails the run (exit "
            "code 1)",
            T::Flag, C::Start, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(validation)},
    // The input pipeline (core::InputPipeline): where each step's batch comes from. Live: one SetInput command.
    Setting{"input", "--input", "Input pipeline",
            "Where batches come from: device (the dataset kept on the GPU, each batch gathered there: the best "
            "case) or host (each batch assembled on the CPU by loader threads and uploaded through staging, as a "
            "DataLoader feeds a GPU; the CPU backend takes its batches from the same kind of loader)",
            T::Choice, C::Live, nullptr, nullptr, input_sources, {}, {},
            TS_ENUM(input.source, InputSource, input_sources)},
    Setting{"augment", "--augment", "Input pipeline",
            "With --input host: random crop (zero padding of 4 pixels) and horizontal flip of each image, drawn "
            "from the seed, the sample and its place in the epoch, so that both backends see the same batches",
            T::Flag, C::Live, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(input.augment)},
    Setting{"loader_threads", "--loader-threads", "Input pipeline",
            "With --input host: threads assembling batches, 1..64 (each batch is cut into one chunk per thread), "
            "per trainer; counted with --threads against the system's thread limit",
            T::Int, C::Live, &rules::loader_threads, nullptr, nullptr, {}, "N", TS_INT(input.loader_threads)},
    Setting{"prefetch", "--prefetch", "Input pipeline",
            "With --input host: batches assembled ahead of the step that uses them, 0..64 (0: each batch only "
            "when its step asks for it)",
            T::Int, C::Live, &rules::prefetch, nullptr, nullptr, {}, "N", TS_INT(input.prefetch)},
    Setting{"pageable", "--pageable", "Input pipeline",
            "With --input host: upload each batch as from pageable memory (the GPU's queue drained first, a fresh "
            "staging buffer per step) instead of through the persistently mapped (pinned) staging ring",
            T::Flag, C::Live, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(input.pageable)},
    // The teaching toggles (core::Execution): the same math, run another way. Live: one SetToggle command each.
    Setting{"unfused", "--unfused", "Teaching toggles",
            "Teaching: bias add and activation as kernels of their own after each GEMM (bias_add, act_forward) "
            "instead of the fused epilogue: more launches, every layer's output read and written again",
            T::Flag, C::Live, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(execution.unfused)},
    Setting{"sync_every_step", "--sync-every-step", "Teaching toggles",
            "Teaching: the GPU waits for every step and reads its loss back at once (the loss.item() pitfall) "
            "instead of every --readback steps",
            T::Flag, C::Live, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(execution.sync_every_step)},
    Setting{"submit_per_kernel", "--submit-per-kernel", "Teaching toggles",
            "Teaching: the GPU submits and waits for every kernel on its own instead of one command buffer per "
            "step (the launch-overhead lesson); the CPU already waits for each kernel's thread-pool dispatch",
            T::Flag, C::Live, nullptr, nullptr, nullptr, {}, {}, TS_FLAG(execution.submit_per_kernel)},
    Setting{"attention", "--attention", "Teaching toggles",
            "Teaching, transformer: fused (one kernel per pass that never stores the scores: FlashAttention's tiles "
            "and online softmax) or naive (scores, softmax and values as kernels of their own, the (batch, heads, "
            "context, context) scores written to memory and read back: more bytes, memory growing with context^2)",
            T::Choice, C::Live, nullptr, nullptr, attention_forms, {}, {},
            [](const TrainConfig& c) { return SettingValue(std::string(c.execution.naive_attention ? "naive" : "fused")); },
            [](TrainConfig& c, const SettingValue& v) { c.execution.naive_attention = std::get<std::string>(v) == "naive"; }},
};

#undef TS_INT
#undef TS_REAL
#undef TS_FLAG
#undef TS_ENUM

// "256,128" or "gpu,cpu" -> its parts; an empty part is refused (",", "256,,128").
std::vector<std::string> split_commas(const Setting& s, std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string_view::npos; start = comma + 1)
    parts.emplace_back(text.substr(start, comma - start));
  parts.emplace_back(text.substr(start));
  for (const auto& part : parts)
    if (part.empty()) bad(fmt::format("{} {}: an empty item; give {}", s.flag, text, choices_text(s)));
  return parts;
}

bool is_choice(const Setting& s, const std::string& name) {
  const auto names = s.choices();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::span<const Setting> settings() { return kRows; }

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : kRows)
    if (s.key == key) return &s;
  return nullptr;
}

const Setting& setting(std::string_view key) {
  if (const Setting* s = find_setting(key)) return *s;
  throw Error(ErrorKind::Internal, fmt::format("no setting \"{}\" in the settings schema", key));
}

std::string choices_text(const Setting& s) {
  if (!s.choices) return "";
  std::string list;
  for (const auto& name : s.choices()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

void check_setting(const Setting& s, const SettingValue& v) {
  switch (s.type) {
    case SettingType::Flag:
    case SettingType::Seed:
      return;  // every value of the type is allowed
    case SettingType::Int:
      return check(*s.int_rule, std::get<long long>(v));
    case SettingType::Real:
      return check(*s.real_rule, std::get<double>(v));
    case SettingType::Choice: {
      const std::string& name = std::get<std::string>(v);
      if (!is_choice(s, name)) bad(fmt::format("{} {}: must be one of {}", s.flag, name, choices_text(s)));
      return;
    }
    case SettingType::Sizes: {
      const auto& sizes = std::get<std::vector<int>>(v);
      if (sizes.empty())
        bad(fmt::format("{}: give at least one size, e.g. {} {}", s.flag, s.flag, s.int_rule->max >= 65536 ? "256,128" : "32,64"));
      for (int n : sizes) check(*s.int_rule, n);
      return;
    }
    case SettingType::Names: {
      const auto& names = std::get<std::vector<std::string>>(v);
      if (names.empty()) bad(fmt::format("{}: name at least one (allowed: {})", s.flag, choices_text(s)));
      const std::string given = setting_text(s, v);
      for (size_t i = 0; i < names.size(); ++i) {
        if (!is_choice(s, names[i]))
          bad(fmt::format("{} {}: unknown name {} (allowed: {})", s.flag, given, names[i], choices_text(s)));
        for (size_t j = 0; j < i; ++j)
          if (names[j] == names[i]) bad(fmt::format("{} {}: {} is named twice", s.flag, given, names[i]));
      }
      return;
    }
    case SettingType::Text:
      return;  // empty: the default (a folder given on the command line is checked there: parse_setting)
  }
}

SettingValue parse_setting(const Setting& s, std::string_view text) {
  SettingValue v;
  switch (s.type) {
    case SettingType::Flag:
      if (text != "true" && text != "false") bad(fmt::format("{} {}: give true or false", s.flag, text));
      v = text == "true";
      break;
    case SettingType::Int:
      v = parse_int(text, *s.int_rule);
      break;
    case SettingType::Real:
      v = parse_real(text, *s.real_rule);
      break;
    case SettingType::Seed:
      v = parse_seed(text);
      break;
    case SettingType::Text:
      if (text.empty()) bad(fmt::format("{}: the value is empty; give {}", s.flag, s.type_name));
      v = std::string(text);
      break;
    case SettingType::Choice:
      v = std::string(text);
      break;
    case SettingType::Sizes: {
      std::vector<int> sizes;
      for (const auto& part : split_commas(s, text)) sizes.push_back(static_cast<int>(parse_int(part, *s.int_rule)));
      v = sizes;
      break;
    }
    case SettingType::Names:
      v = split_commas(s, text);
      break;
  }
  check_setting(s, v);
  return v;
}

std::string setting_text(const Setting& s, const SettingValue& v) {
  switch (s.type) {
    case SettingType::Flag:
      return std::get<bool>(v) ? "true" : "false";
    case SettingType::Int:
      return std::to_string(std::get<long long>(v));
    case SettingType::Real:
      return fmt::format("{:g}", static_cast<float>(std::get<double>(v)));
    case SettingType::Seed:
      return std::to_string(std::get<uint64_t>(v));
    case SettingType::Choice:
    case SettingType::Text:
      return std::get<std::string>(v);
    case SettingType::Sizes:
      return hidden_text(std::get<std::vector<int>>(v));
    case SettingType::Names: {
      std::string list;
      for (const auto& name : std::get<std::vector<std::string>>(v)) list += (list.empty() ? "" : ",") + name;
      return list;
    }
  }
  return "";
}

TrainConfig apply_settings(TrainConfig cfg, std::span<const SettingAssignment> assignments) {
  for (const auto& a : assignments) a.setting->set(cfg, a.value);
  return cfg;
}

}  // namespace core
