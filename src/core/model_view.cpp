// What the model sees (see model_view.hpp).
#include "core/model_view.hpp"

#include <algorithm>

#include "core/text_data.hpp"

namespace core {

int ModelView::correct() const {
  if (positions > 0) {
    if (!tokens_predicted()) return 0;
    int n = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      bool all = true;
      for (size_t t = r * size_t(positions); t < (r + 1) * size_t(positions); ++t)
        if (targets[t] >= 0 && predicted[t] != targets[t]) all = false;
      n += all ? 1 : 0;
    }
    return n;
  }
  int n = 0;
  for (size_t i = 0; i < predicted.size() && i < labels.size(); ++i) n += predicted[i] == labels[i];
  return n;
}

std::vector<std::string> class_names(const Dataset& data) {
  if (data.name == "fashion-mnist" && data.classes == 10)
    return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  std::vector<std::string> names;
  if (!data.vocab.empty()) {  // text: its characters
    for (char c : data.vocab) names.push_back(c == '\n' ? std::string(" ") : std::string(1, c));
    return names;
  }
  for (int c = 0; c < data.classes; ++c) names.push_back(std::to_string(c));
  if (data.name == "reverse" && data.classes == kReverseVocab) names.back() = "|";  // the digits and the separator
  return names;
}

std::vector<int> model_view_rows(const Dataset& test, int count) {
  std::vector<int> rows;
  if (test.tokens()) {
    for (int i = 0; i < std::min(test.count, kModelViewSequences); ++i) rows.push_back(i);
    return rows;
  }
  if (test.height <= 0 || test.width <= 0 || test.classes <= 0 || count <= 0) return rows;
  // The samples of each class in order, then round by round one of each class.
  std::vector<std::vector<int>> by_class(static_cast<size_t>(test.classes));
  for (int i = 0; i < test.count; ++i) {
    const int32_t c = test.y[static_cast<size_t>(i)];
    if (c >= 0 && c < test.classes && by_class[static_cast<size_t>(c)].size() < static_cast<size_t>(count))
      by_class[static_cast<size_t>(c)].push_back(i);
  }
  for (size_t round = 0; static_cast<int>(rows.size()) < count; ++round) {
    bool any = false;
    for (const auto& samples : by_class) {
      if (round >= samples.size()) continue;
      any = true;
      rows.push_back(samples[round]);
      if (static_cast<int>(rows.size()) == count) break;
    }
    if (!any) break;
  }
  return rows;
}

ModelView make_model_view(const Dataset& test, const std::vector<int>& rows) {
  ModelView v;
  v.height = test.height, v.width = test.width, v.channels = test.channels;
  v.rows = rows;
  v.class_names = class_names(test);
  v.positions = test.tokens() ? test.features : 0;
  for (int r : rows) {
    v.images.insert(v.images.end(), test.row(r), test.row(r) + test.features);
    if (test.tokens())
      v.targets.insert(v.targets.end(), test.y.begin() + long(r) * test.features,
                       test.y.begin() + long(r + 1) * test.features);
    else
      v.labels.push_back(test.y[static_cast<size_t>(r)]);
  }
  return v;
}

void set_filters(ModelView& view, const ModelShape& shape, const std::vector<float>& params) {
  view.filters = 0, view.filter_channels = 0;
  view.filter_weights.clear();
  for (int l = 0; l < shape.layers(); ++l) {
    if (shape.kind(l) != LayerKind::Conv) continue;
    const size_t n = shape.weight_count(l);
    const size_t at = shape.weight_offset[static_cast<size_t>(l)];
    if (at + n > params.size()) return;
    view.filters = shape.images[static_cast<size_t>(l) + 1].c;
    view.filter_channels = shape.images[static_cast<size_t>(l)].c;
    view.filter_weights.assign(params.begin() + static_cast<std::ptrdiff_t>(at),
                               params.begin() + static_cast<std::ptrdiff_t>(at + n));
    return;
  }
}

}  // namespace core
