// The random dataset of the seed-mlp benchmark preset (see dataset.hpp): inputs uniform in [0, 1), labels uniform.
#include <fmt/format.h>

#include <algorithm>

#include "core/dataset.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace core {
namespace {

Dataset random_set(const char* name, int features, int classes, int count, Pcg32& rng) {
  Dataset d;
  d.name = name;
  d.count = count;
  d.features = features;
  d.classes = classes;
  d.x.resize(static_cast<size_t>(count) * static_cast<size_t>(features));
  d.y.resize(static_cast<size_t>(count));
  for (auto& v : d.x) v = rng.uniform(0.0f, 1.0f);
  for (auto& label : d.y) label = static_cast<int32_t>(rng.below(static_cast<uint32_t>(classes)));
  return d;
}

}  // namespace

DataSplit make_random(int features, int classes, int train_count, int test_count, uint64_t seed) {
  if (features < 1 || features > 65536 || classes < 2 || classes > 65536 || train_count < 1 || test_count < 0 ||
      static_cast<double>(features) * std::max(train_count, test_count) > 1e9)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("random dataset: {} features, {} classes, {} training and {} test samples are not "
                            "allowed (1..65536 features, 2..65536 classes, at most 1e9 values)",
                            features, classes, train_count, test_count));
  Pcg32 train_rng(seed, 11), test_rng(seed, 12);
  return {random_set("random", features, classes, train_count, train_rng),
          random_set("random", features, classes, test_count, test_rng)};
}

}  // namespace core
