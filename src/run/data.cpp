// Dataset loading by configuration.
#include "run/data.hpp"

#include <algorithm>

namespace run {

core::DataSplit load_data(const core::TrainConfig& cfg) {
  core::DataSplit data;
  if (cfg.dataset == "spiral") {
    data = core::make_spiral(cfg.spiral_classes, cfg.spiral_points, std::max(1, cfg.spiral_points / 4),
                             cfg.spiral_noise, cfg.seed);
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
  if (a.dataset == "random")
    return a.random_features == b.random_features && a.random_classes == b.random_classes &&
           a.random_samples == b.random_samples && a.seed == b.seed;
  return a.data_dir == b.data_dir;
}

}  // namespace run
