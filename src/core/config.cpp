// Validation of TrainConfig: one line per problem, saying what is wrong and what is allowed.
#include "core/config.hpp"
#include "core/run_plan.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"
#include "core/options.hpp"
#include "core/settings_schema.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"
#include "core/trainer.hpp"

namespace core {

float TrainConfig::effective_weight_decay() const {
  if (weight_decay != kOptimizerWeightDecay) return weight_decay;
  return optimizer == Optimizer::AdamW ? 0.01f : 0.0f;  // torch.optim.AdamW / torch.optim.SGD defaults
}

static void fail(const std::string& message) { throw Error(ErrorKind::InvalidArgument, message); }

// What a transformer needs besides each setting's range.
static void validate_transformer(const TrainConfig& c) {
  if (c.embed % c.heads != 0)
    fail(fmt::format("--embed {}: the width must be a multiple of --heads {} (each head takes --embed / --heads "
                     "features); try --embed {}",
                     c.embed, c.heads, (c.embed / c.heads + 1) * c.heads));
  if (c.embed / c.heads > kMaxHeadSize)
    fail(fmt::format("--embed {} / --heads {}: a head size of {} is more than the fused attention's {} (its tiles in "
                     "shared memory and registers hold at most {} features); use more heads, e.g. --heads {}",
                     c.embed, c.heads, c.embed / c.heads, kMaxHeadSize, kMaxHeadSize,
                     (c.embed + kMaxHeadSize - 1) / kMaxHeadSize));
  if (c.dataset == "reverse" && c.context % 2 != 0)
    fail(fmt::format("--context {}: the reversal task's sequences are a string and its reverse, an even length; "
                     "try --context {}",
                     c.context, c.context + 1));
  if (c.input.host())
    fail("--input host: the transformer gathers its token batches on the device only (--input device)");
  if (c.execution.unfused) fail("--unfused: the transformer has no unfused form yet (its GEMMs add their biases)");
  // The naive kernels index their (B, heads, T, T) scores with 32 bits (the shaders' uint).
  const double scores = double(c.batch) * c.heads * double(c.context) * double(c.context);
  if (c.execution.naive_attention && scores > 4294967295.0)
    fail(fmt::format("--attention naive: {:.3g} scores per attention layer (batch {} x {} heads x context {}^2) are more "
                     "than the naive kernels index (2^32); use --attention fused, or a smaller --batch or --context",
                     scores, c.batch, c.heads, c.context));
}

void validate(const TrainConfig& c) {
  if (c.dataset != "fashion-mnist" && c.dataset != "spiral" && c.dataset != "random" && c.dataset != "reverse" &&
      c.dataset != "fortunes")
    fail(fmt::format("--dataset {}: unknown dataset (allowed: fashion-mnist, spiral, reverse, fortunes; random comes "
                     "with --preset seed-mlp)",
                     c.dataset));
  if (c.random_features < 1 || c.random_features > 65536 || c.random_classes < 2 || c.random_classes > 65536 ||
      c.random_samples < 1 || c.random_samples > 1000000)
    fail("random dataset: 1..65536 features, 2..65536 classes and 1..1000000 samples");
  if (c.hidden.empty()) fail("--hidden: at least one hidden layer size is needed, e.g. --hidden 256,128");
  // Every setting's value against its row's rule (core/settings_schema.hpp). The dataset ("random" comes with
  // --preset seed-mlp), the convolutions (a CNN's only) and the backends are checked below with their own words.
  for (const Setting& s : settings()) {
    if (s.key == "dataset" || s.key == "conv" || s.key == "backends") continue;
    if (s.key == "epochs" && c.epochs == kUntilStopped) continue;
    check_setting(s, s.get(c));
  }
  if (c.model == ModelKind::CNN) {
    if (c.conv.empty()) fail("--conv: a CNN needs at least one convolution; give channels, e.g. --conv 32,64");
    for (int channels : c.conv) check(rules::conv, channels);
  }
  if (c.model == ModelKind::Transformer) validate_transformer(c);
  if (c.model != ModelKind::Transformer && c.execution.naive_attention)
    fail(fmt::format("--attention naive: the {} model has no attention layers; only --model transformer has",
                     to_string(c.model)));
  if (c.backends.empty()) fail("--backend: name at least one backend (allowed: gpu, cpu, or gpu,cpu)");
  for (size_t i = 0; i < c.backends.size(); ++i) {
    const auto& b = c.backends[i];
    if (b != "gpu" && b != "cpu") fail(fmt::format("--backend {}: unknown backend (allowed: gpu, cpu, or gpu,cpu)", b));
    for (size_t j = 0; j < i; ++j)
      if (c.backends[j] == b) fail(fmt::format("--backend: {} is named twice", b));
  }
}

ModelShape model_shape(const TrainConfig& c, const DataSplit& data) {
  const Dataset& train = data.train;
  if (c.model == ModelKind::Transformer) {
    if (!train.tokens())
      fail(fmt::format("--model transformer: the {} dataset is not text (a transformer reads sequences of tokens); "
                       "use --dataset reverse or --dataset fortunes",
                       train.name.empty() ? c.dataset : train.name));
    return ModelShape::transformer({.vocab = train.classes, .context = train.features, .embed = c.embed,
                                    .heads = c.heads, .layers = c.layers, .tied = true, .counted = train.counted});
  }
  if (train.tokens())
    fail(fmt::format("--model {}: the {} dataset is sequences of tokens; use --model transformer", to_string(c.model),
                     train.name));
  if (c.model == ModelKind::CNN) {
    const Dataset& d = data.train;
    if (d.height <= 0)
      fail(fmt::format("--model cnn: the {} dataset has no images (a CNN convolves pixels); use --dataset "
                       "fashion-mnist, or --model mlp",
                       d.name.empty() ? c.dataset : d.name));
    return ModelShape::cnn({d.channels, d.height, d.width}, c.conv, c.hidden, d.classes);
  }
  std::vector<int> dims{data.train.features};
  dims.insert(dims.end(), c.hidden.begin(), c.hidden.end());
  dims.push_back(data.train.classes);
  return ModelShape(dims);
}

void validate_against_data(const TrainConfig& c, const DataSplit& data) {
  // The transformer's own rules again: a live change (--unfused, --input host) reaches a rebuild through here only.
  if (c.model == ModelKind::Transformer) validate_transformer(c);
  const int train_count = data.train.count;
  if (c.batch > train_count)
    fail(fmt::format("--batch {}: larger than the training set ({} samples); use a batch size of 1..{}", c.batch,
                     train_count, train_count));
  if (c.input.host() && c.input.augment)
    if (const std::string problem = augment_problem(data.train); !problem.empty()) fail(problem);
  // The sizes alone, before any allocation (a ModelShape only holds offsets).
  // The run's tensors in fp32 without the dataset (the data is loaded already: this bounds the model).
  const RunPlan run = run_plan(c, data, Precision::FP32);
  const ModelShape& shape = run.shape;
  const MemoryUsage m = run.layout.usage(false);
  const double bytes = static_cast<double>(m.total());
  if (bytes > kMaxTrainingBytes)
    fail(fmt::format("--hidden/--batch: this model needs {:.1f} GiB for its weights, gradients, optimizer state and "
                     "activations ({} parameters); at most {:.0f} GiB is allowed: use smaller layers or batches",
                     bytes / (1ull << 30), shape.real_param_count, kMaxTrainingBytes / (1ull << 30)));
}

std::string hidden_text(const std::vector<int>& hidden) {
  std::string text;
  for (int h : hidden) text += fmt::format("{}{}", text.empty() ? "" : ",", h);
  return text;
}

namespace {
// "256,128" -> {256, 128}, each within `rule` (--hidden, --conv).
std::vector<int> parse_sizes(const std::string& text, const IntRule& rule, const char* example) {
  std::vector<int> sizes;
  if (text.empty())
    fail(fmt::format("{}: the value is empty; give layer sizes separated by commas, e.g. {} {}", rule.option,
                     rule.option, example));
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    long long value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size())
      fail(fmt::format("{} {}: '{}' is not a layer size; give positive integers separated by commas, e.g. {}",
                       rule.option, text, part, example));
    if (value < rule.min || value > rule.max)
      fail(fmt::format("{} {}: layer size {} is not allowed ({} must be {})", rule.option, text, value, rule.what,
                       allowed(rule)));
    sizes.push_back(static_cast<int>(value));
    start = end + 1;
  }
  return sizes;
}
}  // namespace

std::vector<int> parse_hidden(const std::string& text) { return parse_sizes(text, rules::hidden, "256,128"); }
std::vector<int> parse_conv(const std::string& text) { return parse_sizes(text, rules::conv, "32,64"); }

const char* to_string(ModelKind m) {
  switch (m) {
    case ModelKind::MLP: return "mlp";
    case ModelKind::CNN: return "cnn";
    case ModelKind::Transformer: return "transformer";
  }
  return "?";
}

const char* to_string(Execution::Toggle t) {
  switch (t) {
    case Execution::Toggle::Unfused: return "unfused";
    case Execution::Toggle::SyncEveryStep: return "sync every step";
    case Execution::Toggle::SubmitPerKernel: return "submit per kernel";
    case Execution::Toggle::NaiveAttention: return "naive attention";
  }
  return "?";
}

std::string to_string(const Execution& e) {
  std::string s;
  for (auto t : kToggles)
    if (e[t]) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s.empty() ? "fused" : s;
}

}  // namespace core
