// Validation of TrainConfig: one line per problem, saying what is wrong and what is allowed.
#include "core/config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.hpp"
#include "core/step_plan.hpp"
#include "core/trainer.hpp"

namespace core {

float TrainConfig::effective_weight_decay() const {
  if (weight_decay >= 0) return weight_decay;
  return optimizer == Optimizer::AdamW ? 0.01f : 0.0f;  // torch.optim.AdamW / torch.optim.SGD defaults
}

static void fail(const std::string& message) { throw Error(ErrorKind::InvalidArgument, message); }

void validate(const TrainConfig& c) {
  if (c.dataset != "fashion-mnist" && c.dataset != "spiral" && c.dataset != "random")
    fail(fmt::format("--dataset {}: unknown dataset (allowed: fashion-mnist, spiral; random comes with --preset seed-mlp)", c.dataset));
  if (c.random_features < 1 || c.random_features > 65536 || c.random_classes < 2 || c.random_classes > 65536 ||
      c.random_samples < 1 || c.random_samples > 1000000)
    fail("random dataset: 1..65536 features, 2..65536 classes and 1..1000000 samples");
  if (c.hidden.empty()) fail("--hidden: at least one hidden layer size is needed, e.g. --hidden 256,128");
  for (int h : c.hidden)
    if (h < 1 || h > 65536) fail(fmt::format("--hidden: layer size {} is not allowed (each size must be 1..65536)", h));
  if (!(c.lr > 0) || !std::isfinite(c.lr) || c.lr > 10)
    fail(fmt::format("--lr {}: the learning rate must be a number > 0 and <= 10", c.lr));
  if (c.batch < 1 || c.batch > 65536) fail(fmt::format("--batch {}: the batch size must be 1..65536", c.batch));
  if (c.epochs < 1 || c.epochs > 10000) fail(fmt::format("--epochs {}: must be 1..10000", c.epochs));
  if (c.momentum < 0 || c.momentum >= 1) fail(fmt::format("--momentum {}: must be in [0, 1)", c.momentum));
  if (c.weight_decay > 1) fail(fmt::format("--weight-decay {}: must be in [0, 1]", c.weight_decay));
  if (c.threads < 0 || c.threads > 1024) fail(fmt::format("--threads {}: must be 1..1024 (0: all hardware threads)", c.threads));
  if (c.readback_interval < 1 || c.readback_interval > 1000)
    fail(fmt::format("--readback {}: must be 1..1000 steps", c.readback_interval));
  if (!std::isfinite(c.loss_scale_init) || !(c.loss_scale_init >= 1.0f))
    fail(fmt::format("--loss-scale {}: the initial fp16 loss scale must be a finite number >= 1 (default 65536)",
                     c.loss_scale_init));
  if (c.limit < 0) fail(fmt::format("--limit {}: must be >= 0 (0: the whole training set)", c.limit));
  if (c.spiral_classes < 2 || c.spiral_classes > 16) fail(fmt::format("--spiral-classes {}: must be 2..16", c.spiral_classes));
  if (c.spiral_points < 4 || c.spiral_points > 1000000) fail(fmt::format("--spiral-points {}: must be 4..1000000", c.spiral_points));
  if (!(c.spiral_noise >= 0) || c.spiral_noise > 1) fail(fmt::format("--spiral-noise {}: must be in [0, 1]", c.spiral_noise));
  if (c.backends.empty()) fail("--backend: name at least one backend (allowed: gpu, cpu, or gpu,cpu)");
  for (size_t i = 0; i < c.backends.size(); ++i) {
    const auto& b = c.backends[i];
    if (b != "gpu" && b != "cpu") fail(fmt::format("--backend {}: unknown backend (allowed: gpu, cpu, or gpu,cpu)", b));
    for (size_t j = 0; j < i; ++j)
      if (c.backends[j] == b) fail(fmt::format("--backend: {} is named twice", b));
  }
}

ModelShape model_shape(const TrainConfig& c, const DataSplit& data) {
  std::vector<int> dims{data.train.features};
  dims.insert(dims.end(), c.hidden.begin(), c.hidden.end());
  dims.push_back(data.train.classes);
  return ModelShape(dims);
}

void validate_against_data(const TrainConfig& c, const DataSplit& data) {
  const int train_count = data.train.count;
  if (c.batch > train_count)
    fail(fmt::format("--batch {}: larger than the training set ({} samples); use a batch size of 1..{}", c.batch,
                     train_count, train_count));
  // The sizes alone, before any allocation (a ModelShape only holds offsets).
  const ModelShape shape = model_shape(c, data);
  const StepPlan plan = build_step_plan(shape, c.batch, c.activation, c.optimizer);
  MemoryUsage m = fp32_reference_memory(plan, 0, 0, static_cast<size_t>(c.readback_interval));
  const double bytes = static_cast<double>(m.total());
  if (bytes > kMaxTrainingBytes)
    fail(fmt::format("--hidden/--batch: this model needs {:.1f} GiB for its weights, gradients, optimizer state and "
                     "activations ({} parameters); at most {:.0f} GiB is allowed: use smaller layers or batches",
                     bytes / (1ull << 30), shape.real_param_count, kMaxTrainingBytes / (1ull << 30)));
}

std::vector<int> parse_hidden(const std::string& text) {
  std::vector<int> sizes;
  if (text.empty()) fail("--hidden: empty; give layer sizes separated by commas, e.g. --hidden 256,128");
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    int value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size())
      fail(fmt::format("--hidden {}: '{}' is not a layer size; give positive integers separated by commas, e.g. 256,128",
                       text, part));
    if (value < 1 || value > 65536)
      fail(fmt::format("--hidden {}: layer size {} is not allowed (each size must be 1..65536)", text, value));
    sizes.push_back(value);
    start = end + 1;
  }
  return sizes;
}

}  // namespace core
