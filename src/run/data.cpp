// Dataset loading by configuration.
#include "run/data.hpp"

#include <algorithm>
#include <vector>

#include "core/text_data.hpp"

namespace run {
namespace {

// The reversal task: --context / 2 digits, then the separator and their reverse (core::reverse_task_batch); the test
// set from another stream of strings (held out: at 16 digits, 10^16 strings, none seen in training).
core::DataSplit reverse_task(const core::TrainConfig& cfg) {
  const int digits = cfg.context / 2;
  core::DataSplit d;
  d.train = core::token_dataset(core::reverse_task_batch(digits, cfg.seed, 0, cfg.reverse_samples),
                                core::kReverseVocab, "reverse");
  d.test = core::token_dataset(core::reverse_task_batch(digits, cfg.seed + 1, 0, std::max(1, cfg.reverse_samples / 10)),
                               core::kReverseVocab, "reverse");
  return d;
}

// The fortunes corpus (core::read_fortunes) in windows of --context tokens: its training part and its held-out
// cookies.
core::DataSplit fortunes_text(const core::TrainConfig& cfg) {
  const core::TextCorpus corpus = core::read_fortunes(cfg.data_dir.empty() ? core::kDefaultFortunesDir : cfg.data_dir);
  auto windows = [&](bool validation) {
    std::vector<uint32_t> all(core::text_windows(corpus, cfg.context, validation));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
    core::Dataset d = core::token_dataset(core::text_batch(corpus, cfg.context, validation, all),
                                          corpus.vocab_size(), "fortunes");
    d.vocab.assign(corpus.vocab.begin(), corpus.vocab.end());  // for showing its text
    return d;
  };
  return {windows(false), windows(true), 0};
}

}  // namespace

core::DataSplit load_data(const core::TrainConfig& cfg) {
  core::DataSplit data;
  if (cfg.dataset == "spiral") {
    data = core::make_spiral(cfg.spiral_classes, cfg.spiral_points, std::max(1, cfg.spiral_points / 4),
                             cfg.spiral_noise, cfg.seed);
  } else if (cfg.dataset == "reverse") {
    data = reverse_task(cfg);
  } else if (cfg.dataset == "fortunes") {
    data = fortunes_text(cfg);
  } else if (cfg.dataset == "random") {
    data = core::make_random(cfg.random_features, cfg.random_classes, cfg.random_samples,
                             std::max(1, cfg.random_samples / 10), cfg.seed);
  } else {
    const bool is_default = cfg.data_dir.empty();
    // --limit is applied while reading: a gzip file is inflated only as far as the first samples need.
    data = core::load_mnist_dir(is_default ? core::default_fashion_mnist_dir() : cfg.data_dir, is_default, cfg.limit);
  }
  if (cfg.limit > 0) data.train = core::take_first(data.train, cfg.limit);
  data.content_id = core::next_content_id();  // named once its content is final
  return data;
}

bool same_data(const core::TrainConfig& a, const core::TrainConfig& b) {
  if (a.dataset != b.dataset || a.limit != b.limit) return false;
  if (a.dataset == "spiral")
    return a.spiral_classes == b.spiral_classes && a.spiral_points == b.spiral_points &&
           a.spiral_noise == b.spiral_noise && a.seed == b.seed;
  if (a.dataset == "reverse") return a.context == b.context && a.reverse_samples == b.reverse_samples && a.seed == b.seed;
  if (a.dataset == "fortunes") return a.context == b.context && a.data_dir == b.data_dir;
  if (a.dataset == "random")
    return a.random_features == b.random_features && a.random_classes == b.random_classes &&
           a.random_samples == b.random_samples && a.seed == b.seed;
  return a.data_dir == b.data_dir;
}

}  // namespace run
