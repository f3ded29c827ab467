// Datasets in memory: MNIST-format IDX directories (Fashion-MNIST by default), the K-arm spiral, and take_first.
#include "core/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/idx.hpp"
#include "core/memory_budget.hpp"
#include "core/rng.hpp"
#include "platform/files.hpp"
#include "platform/process.hpp"

namespace core {
namespace {

namespace fs = std::filesystem;

std::string default_dir_missing(const std::string& dir) {
  return fmt::format("Fashion-MNIST not found in {}: install it with `sudo apt-get install dataset-fashion-mnist`, "
                     "or pass --data DIR with MNIST-format IDX files", dir);
}

// dir/base.gz if it exists, else dir/base if it exists, else "" (Debian's package ships .gz; a user's download may
// be either). A name that exists but cannot be looked at (a symlink loop, a folder without search permission) is an
// error saying so, not "missing".
std::string find_idx_file(const fs::path& dir, const std::string& base) {
  for (const std::string& name : {base + ".gz", base}) {
    const fs::path p = dir / name;
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (st.type() == fs::file_type::not_found) continue;
    if (ec) throw Error(ErrorKind::Data, fmt::format("{}: cannot be read: {}", p.string(), ec.message()));
    return p.string();
  }
  return {};
}

// One standard normal pair by the Box-Muller transform (G. E. P. Box & M. E. Muller, "A Note on the Generation of
// Random Normal Deviates", Ann. Math. Statist. 29(2), 1958): z0 = sqrt(-2 ln u1) cos(2 pi u2),
// z1 = sqrt(-2 ln u1) sin(2 pi u2), with u1 in (0, 1] so that the log is finite.
std::array<float, 2> normal_pair(Pcg32& rng) {
  const double u1 = 1.0 - static_cast<double>(rng.uniform());
  const double u2 = static_cast<double>(rng.uniform());
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * std::numbers::pi * u2;
  return {static_cast<float>(r * std::cos(a)), static_cast<float>(r * std::sin(a))};
}

// One split of the spiral: per_class points on each of `classes` arms, interleaved so that sample s has label
// s % classes (any prefix of `classes` samples holds every class once). Along each arm the radii are stratified,
// r = (stratum + u) / per_class with u uniform in [0, 1), and the strata are visited in a shuffled order, so a
// prefix also covers the whole spiral rather than only its centre.
Dataset spiral_split(int classes, int per_class, float noise, Pcg32 rng) {
  Dataset d;
  d.name = "spiral";
  d.count = classes * per_class;
  d.features = 2;
  d.classes = classes;
  d.x.resize(static_cast<size_t>(d.count) * 2);
  d.y.resize(static_cast<size_t>(d.count));

  std::vector<std::vector<int>> strata(static_cast<size_t>(classes), std::vector<int>(per_class));
  for (auto& order : strata) {
    for (int i = 0; i < per_class; ++i) order[i] = i;
    for (int i = per_class - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(order[i], order[rng.below(static_cast<uint32_t>(i + 1))]);
    }
  }
  // TensorFlow Playground's spiral: angle = 1.75 turns * r + the arm's offset, point = r (sin, cos)(angle);
  // its radius 5 is scaled to 1 here and its two arms (offset pi) generalised to K (offsets 2 pi k / K).
  constexpr double kTurns = 1.75;
  const double two_pi = 2.0 * std::numbers::pi;
  for (int i = 0; i < per_class; ++i) {
    for (int k = 0; k < classes; ++k) {
      const size_t s = static_cast<size_t>(i) * classes + k;
      const double r = (strata[k][i] + static_cast<double>(rng.uniform())) / per_class;
      const double angle = kTurns * two_pi * r + two_pi * k / classes;
      const std::array<float, 2> n = normal_pair(rng);
      d.x[2 * s] = static_cast<float>(r * std::sin(angle)) + noise * n[0];
      d.x[2 * s + 1] = static_cast<float>(r * std::cos(angle)) + noise * n[1];
      d.y[s] = k;
    }
  }
  return d;
}

}  // namespace

Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, const std::string& name,
                      int max_classes, int max_count) {
  const uint64_t limit = max_count > 0 ? static_cast<uint64_t>(max_count) : 0;
  IdxImages images = read_idx_images(images_path, limit);
  IdxLabels labels = read_idx_labels(labels_path, max_classes, limit);
  // The headers' counts, so that a --limit does not hide a mismatch.
  if (images.declared_count != labels.declared_count) {
    throw Error(ErrorKind::Data,
                fmt::format("{}: image/label count mismatch: {} images here but {} labels in {} "
                            "(the two files of a split must match)",
                            images_path, images.declared_count, labels.declared_count, labels_path));
  }
  Dataset d;
  d.name = name;
  d.count = images.count;
  d.features = images.rows * images.cols;
  d.height = images.rows;
  d.width = images.cols;
  d.channels = 1;
  d.classes = max_classes;
  d.x = std::move(images.pixels);
  d.y = std::move(labels.values);
  return d;
}

std::string default_fashion_mnist_dir() {
  std::error_code ec;
  if (fs::is_directory(kDefaultFashionMnistDir, ec)) return kDefaultFashionMnistDir;
  const fs::path self = platform::executable_path();
  if (!self.empty()) {
    const fs::path beside = self.parent_path() / "data" / "fashion-mnist";
    if (fs::is_directory(beside, ec)) return beside.string();
  }
  return kDefaultFashionMnistDir;
}

DataSplit load_mnist_dir(const std::string& dir, bool is_default_dir, int train_limit) {
  const std::array<std::string, 4> bases = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                            "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found && is_default_dir) throw Error(ErrorKind::Data, default_dir_missing(dir));
  // A symlink loop or a path without permission is reported as such, not as a missing directory.
  const std::string problem = st.type() == fs::file_type::not_found ? "directory not found"
                              : ec                                   ? fmt::format("cannot be read: {}", ec.message())
                              : st.type() != fs::file_type::directory ? "is not a directory"
                                                                      : "";
  if (!problem.empty())
    throw Error(ErrorKind::Data,
                fmt::format("{}: {}; --data expects a directory with MNIST-format IDX files "
                            "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
                            "t10k-labels-idx1-ubyte (each plain or .gz)",
                            dir, problem));
  // A directory that cannot be listed or searched: say so instead of "no train-images... in this directory".
  if (const int error = platform::check_readable_directory(dir))
    throw Error(ErrorKind::Data, fmt::format("{}: cannot read the directory: {}; check its permissions", dir,
                                             std::error_code(error, std::generic_category()).message()));
  std::array<std::string, 4> paths;
  for (size_t i = 0; i < bases.size(); ++i) {
    paths[i] = find_idx_file(dir, bases[i]);
    if (!paths[i].empty()) continue;
    if (is_default_dir) {
      throw Error(ErrorKind::Data, default_dir_missing(dir) + fmt::format(" (missing: {}[.gz])", bases[i]));
    }
    throw Error(ErrorKind::Data,
                fmt::format("{}: no {} or {}.gz in this directory; --data expects MNIST-format IDX files "
                            "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
                            "t10k-labels-idx1-ubyte (each plain or .gz)",
                            dir, bases[i], bases[i]));
  }
  const std::string name = is_default_dir ? "fashion-mnist" : fmt::format("mnist-format ({})", dir);
  // What the four files will take as floats and int32 labels, from their headers, before a byte of payload is read:
  // a dataset (or a gzip bomb's valid header) larger than the machine's memory is refused, not the OOM killer's.
  MemoryNeed need;
  for (size_t split = 0; split < 2; ++split) {
    const std::vector<uint32_t> dims = read_idx_dims(paths[2 * split], true);
    const double count = train_limit > 0 ? std::min<double>(dims[0], train_limit) : dims[0];
    need.add(split == 0 ? "the training set" : "the test set", count * (double(dims[1]) * dims[2] + 1) * 4);
  }
  check_host_memory(need, fmt::format("--data {}: reading the dataset", dir),
                    "read fewer samples with --limit N, or free some memory");
  DataSplit split;
  split.train = read_idx_pair(paths[0], paths[1], name, 10, train_limit);
  // --limit bounds the test set too: evaluating 10000 samples after an epoch of 1000 is what a quick run does not
  // want, and only the first N of each test file are read (a gzip bomb as t10k-images is inflated no further).
  split.test = read_idx_pair(paths[2], paths[3], name, 10, train_limit);
  // The shape, not only the pixel count: a CNN would take 14x56 test images for 28x28 ones (issue 34).
  if (split.train.features != split.test.features || split.train.height != split.test.height ||
      split.train.width != split.test.width) {
    throw Error(ErrorKind::Data,
                fmt::format("{}: test images are {}x{} ({} pixels each) but the training images in {} are {}x{} ({}); "
                            "both splits must have the same image size",
                            paths[2], split.test.height, split.test.width, split.test.features, paths[0],
                            split.train.height, split.train.width, split.train.features));
  }
  return split;
}

DataSplit make_spiral(int classes, int train_per_class, int test_per_class, float noise, uint64_t seed) {
  if (classes < 2 || classes > 256) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("spiral: {} classes is outside [2, 256]", classes));
  }
  if (train_per_class < 1 || test_per_class < 0) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("spiral: {} training and {} test samples per class (need >= 1 and >= 0)",
                            train_per_class, test_per_class));
  }
  if (static_cast<int64_t>(classes) * std::max(train_per_class, test_per_class) >
      std::numeric_limits<int>::max() / 2) {
    throw Error(ErrorKind::InvalidArgument, "spiral: too many samples (classes x samples per class x 2 features "
                                            "must fit in an int)");
  }
  if (!std::isfinite(noise) || noise < 0.0f) {
    throw Error(ErrorKind::InvalidArgument, fmt::format("spiral: noise {} must be finite and >= 0", noise));
  }
  // Two streams of one seed: the test set is independent of the training set, and changing the number of
  // training samples does not change the test set.
  DataSplit split;
  split.train = spiral_split(classes, train_per_class, noise, Pcg32(seed, 0x7472));  // "tr"
  split.test = spiral_split(classes, test_per_class, noise, Pcg32(seed, 0x7465));    // "te"
  return split;
}

uint64_t next_content_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

Dataset take_first(const Dataset& d, int n) {
  if (n < 0) throw Error(ErrorKind::InvalidArgument, fmt::format("take_first: n = {} is negative", n));
  if (n >= d.count) return d;
  Dataset out;
  out.name = d.name;
  out.count = n;
  out.features = d.features;
  out.height = d.height;
  out.width = d.width;
  out.channels = d.channels;
  out.classes = d.classes;
  out.counted = d.counted;
  out.vocab = d.vocab;
  out.x.assign(d.x.begin(), d.x.begin() + static_cast<ptrdiff_t>(n) * d.features);
  // A token dataset has a target per position (features of them per sample), other data one label per sample.
  out.y.assign(d.y.begin(), d.y.begin() + static_cast<ptrdiff_t>(n) * (d.tokens() ? d.features : 1));
  return out;
}

}  // namespace core
