// Datasets in memory: Fashion-MNIST (and any MNIST-format IDX files) and the synthetic spiral.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace core {

// count samples of `features` floats each, row-major: x is (count, features), y is (count) with labels in
// [0, classes). Pixels are scaled to [0, 1].
struct Dataset {
  std::string name;
  int count = 0;
  int features = 0;
  int classes = 0;
  // Images (IDX files): features = height x width x channels, stored pixel by pixel with the channel fastest (NHWC).
  // 0 for data that are not images (the spiral, random vectors).
  int height = 0, width = 0, channels = 0;
  // Sequences of tokens (a transformer's data, core::token_dataset): features = T positions per sample, x their token
  // ids (exact in fp32), classes the vocabulary, y (count, T) each position's target (the next token; -1 where it does
  // not count) and `counted` the positions per sample whose targets count. 0 for other data.
  int counted = 0;
  std::string vocab;  // text: the byte each token id stands for (TextCorpus::vocab); empty for other data
  std::vector<float> x;
  std::vector<int32_t> y;
  bool tokens() const { return counted > 0; }

  const float* row(int i) const { return x.data() + static_cast<size_t>(i) * features; }
};

struct DataSplit {
  Dataset train;
  Dataset test;
  // A number naming this loaded content within the process (0: not named): a GPU backend keeps its uploaded copy of
  // the data across trainer rebuilds only while the id matches. run::load_data names what it loads; whoever changes
  // x or y after that must set a new id (next_content_id()) or 0.
  uint64_t content_id = 0;
};

// A process-unique, never-zero id for DataSplit::content_id. Thread-safe.
uint64_t next_content_id();

// The IDX files of one split: images (magic 0x00000803, dims N,rows,cols) and labels (magic 0x00000801, dim N).
// Either may be gzip-compressed (read through zlib) or plain. Labels must be < max_classes.
// Throws core::Error(Data) naming the file and the field on any problem (wrong magic, wrong number of dimensions,
// truncated data, label above max_classes-1, image/label count mismatch, corrupt gzip, empty file, a directory,
// a missing file). Sizes are checked against the file before anything is allocated.
// max_count > 0: only the first max_count samples are read (and inflated); the headers' counts must still match.
Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, const std::string& name,
                      int max_classes = 10, int max_count = 0);

// Loads train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz] and
// t10k-labels-idx1-ubyte[.gz] from dir. A missing default directory says: install dataset-fashion-mnist or pass --data DIR.
// train_limit > 0 (--limit): only the first train_limit training samples are read; the test split is read whole.
DataSplit load_mnist_dir(const std::string& dir, bool is_default_dir, int train_limit = 0);

// Default location of Debian's dataset-fashion-mnist package.
inline const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// The Fashion-MNIST folder used without --data: kDefaultFashionMnistDir where it exists, else data/fashion-mnist
// beside the executable (the Windows download ships the files there), else kDefaultFashionMnistDir (whose absence
// load_mnist_dir explains).
std::string default_fashion_mnist_dir();

// The spiral of TensorFlow Playground generalised to K arms: 2-D points, `classes` interleaved arms, Gaussian noise
// of standard deviation `noise` (in units of the spiral's radius 1), from core::Pcg32(seed).
// Train and test sets are drawn independently (different streams).
DataSplit make_spiral(int classes, int train_per_class, int test_per_class, float noise, uint64_t seed);

// Random inputs and labels, as benchmarks of training speed use them (the seed-mlp preset): x uniform in [0, 1), y
// uniform in [0, classes), from core::Pcg32(seed) (train and test from different streams). Nothing to learn: only
// the speed means anything. Throws core::Error(InvalidArgument) on sizes outside 1..65536 features, 2..65536 classes.
DataSplit make_random(int features, int classes, int train_count, int test_count, uint64_t seed);

// The first n samples of d (n >= d.count returns d unchanged). Used by --limit and the tests.
Dataset take_first(const Dataset& d, int n);

}  // namespace core
