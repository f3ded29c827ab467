// What the model sees: a few test images with the class the current weights predict for each and its true class, and
// for a CNN the first convolution's filters, for the dashboard's Model tab. The run layer's worker makes one from the
// trainer's own predict() and parameters() a few times a second (run/worker_view.cpp); the UI only draws it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/model.hpp"

namespace core {

inline constexpr int kModelViewImages = 16;        // the test images shown
inline constexpr int kModelViewSequences = 8;      // the test sequences shown (token data)
inline constexpr double kModelViewSeconds = 1.0;   // how often a worker refreshes its view while training

struct ModelView {
  int height = 0, width = 0, channels = 0;  // of each image
  std::vector<int> rows;                    // the test samples shown (indices into the test set)
  std::vector<float> images;                // rows.size() x height x width x channels, as the model reads them
  std::vector<int32_t> labels;              // their true classes
  std::vector<std::string> class_names;     // per class
  // The classes the weights predict (Trainer::predict: the backend's own forward kernels, the first maximum); empty
  // when the trainer cannot predict. `step`: the steps read back when they were predicted.
  std::vector<int32_t> predicted;
  long step = 0;
  // The parameters they were predicted with (the fp32 master weights, ModelShape layout, Trainer::parameters()): what
  // a check recomputes the predictions from, and where the filters below come from. Null before the first view.
  std::shared_ptr<const std::vector<float>> params;
  // A CNN: its first convolution's filters, `filters` of kConvKernel x kConvKernel x filter_channels weights each, in
  // the parameters' order (OC x 3 x 3 x C); 0 filters for an MLP.
  int filters = 0, filter_channels = 0;
  std::vector<float> filter_weights;

  // Token data (a transformer's): `images` holds the sequences shown (rows x positions token ids), `targets` each
  // position's target (-1 where it does not count), `class_names` the text of each token, and `predicted` the token
  // each position predicts next (rows x positions). 0 positions for images.
  int positions = 0;
  std::vector<int32_t> targets;
  // Text: what the model writes. Each sequence's first `prompt` tokens, then the tokens it generates one at a time
  // (greedy: the most likely next token, appended, the sequence predicted again), up to `positions` (rows x positions;
  // empty until generated).
  int prompt = 0;
  std::vector<int32_t> generated;

  int count() const { return static_cast<int>(rows.size()); }
  // How many of the predicted classes equal the true ones; token data: how many sequences have every position that
  // counts right.
  int correct() const;
  // Token data: whether `predicted` holds a token per position of every sequence shown.
  bool tokens_predicted() const { return positions > 0 && predicted.size() == targets.size(); }
};

// The names of `data`'s classes: Fashion-MNIST's ten (T-shirt/top, Trouser, ... as its authors name them:
// Xiao, Rasul & Vollgraf 2017); the reversal task's digits and "|"; text's characters (a newline as a space); for
// other data the class numbers ("0", "1", ...).
std::vector<std::string> class_names(const Dataset& data);

// `count` test samples to show, spread over the classes: the first sample of class 0, of class 1, ... then the second
// of each, in that order (fewer when the test set has fewer). Token data: its first kModelViewSequences sequences.
// Empty for other data that are not images.
std::vector<int> model_view_rows(const Dataset& test, int count = kModelViewImages);

// A view of `test`'s `rows` (images, labels, names), not yet predicted.
ModelView make_model_view(const Dataset& test, const std::vector<int>& rows);

// The first convolution's filters of `params` into `view` (nothing for a model without convolutions).
void set_filters(ModelView& view, const ModelShape& shape, const std::vector<float>& params);

}  // namespace core
