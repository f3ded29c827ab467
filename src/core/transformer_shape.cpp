// ModelShape::transformer: a decoder-only transformer as a list of layers with their data flow (model.hpp), and its
// GPT-2 initialisation.
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/rng.hpp"

namespace core {

ModelShape ModelShape::transformer(const TransformerSizes& t) {
  if (t.vocab < 1 || t.context < 1 || t.embed < 1 || t.heads < 1 || t.layers < 1 || t.embed % t.heads != 0)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("a transformer needs sizes of 1 or more and an embedding that is a multiple of the heads "
                            "(--embed {}, --heads {}, --layers {}, --context {}, vocabulary {})",
                            t.embed, t.heads, t.layers, t.context, t.vocab));
  ModelShape s;
  s.positions = t.context;
  s.heads = t.heads;
  s.tied = t.tied;
  s.counted = t.counted > 0 ? t.counted : t.context;
  const int C = t.embed;
  s.dims.push_back(1);  // one token per position
  // Adds a layer of `kind` with `width` outputs per position reading layer `in`; returns its index.
  auto add = [&](LayerKind kind, int width, int in, int skip = -1, bool act = false) {
    s.kinds.push_back(kind);
    s.dims.push_back(width);
    s.input.push_back(in);
    s.skip.push_back(skip);
    s.activated.push_back(act ? 1 : 0);
    const int l = static_cast<int>(s.kinds.size()) - 1;
    // Along the residual stream (the embedding, the residuals and the branches' last projections, whose outputs
    // are added to it) the gradient is the stream's own: layer 0's tensor.
    s.grad.push_back(l);
    return l;
  };
  int stream = add(LayerKind::Embedding, C, -1);
  for (int b = 0; b < t.layers; ++b) {
    const int ln1 = add(LayerKind::Norm, C, stream);
    const int qkv = add(LayerKind::Dense, 3 * C, ln1);
    const int att = add(LayerKind::Attention, C, qkv);
    const int proj = add(LayerKind::Dense, C, att);
    const int mid = add(LayerKind::Residual, C, proj, stream);
    const int ln2 = add(LayerKind::Norm, C, mid);
    const int fc = add(LayerKind::Dense, 4 * C, ln2, -1, true);
    const int out = add(LayerKind::Dense, C, fc);
    stream = add(LayerKind::Residual, C, out, mid);
    for (int l : {proj, mid, out, stream}) s.grad[static_cast<size_t>(l)] = 0;
  }
  const int lnf = add(LayerKind::Norm, C, stream);
  add(LayerKind::Dense, t.vocab, lnf);
  for (int n : s.dims) s.images.push_back({n, 1, 1});
  s.lay_out_parameters();
  return s;
}

std::vector<float> init_transformer(const ModelShape& s, uint64_t seed) {
  std::vector<float> w(s.param_count, 0.0f);
  Pcg32 rng(seed);
  auto normal = [&](size_t at, size_t n, double sd) {  // Box-Muller: two uniforms in (0, 1] and [0, 1)
    for (size_t i = 0; i < n; ++i) {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      w[at + i] = static_cast<float>(sd * std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.141592653589793 * u2));
    }
  };
  const double residual = 0.02 / std::sqrt(2.0 * s.blocks());
  for (int l = 0; l < s.layers(); ++l) {
    if (s.tied && l == s.layers() - 1) continue;  // the embedding's weight
    switch (s.kind(l)) {
      case LayerKind::Embedding:
        normal(s.weight_offset[l], s.weight_count(l), 0.02);
        normal(s.bias_offset[l], s.bias_count(l), 0.02);  // the position embeddings
        break;
      case LayerKind::Norm: std::fill_n(w.begin() + long(s.weight_offset[l]), s.weight_count(l), 1.0f); break;
      case LayerKind::Dense: {  // the projections whose outputs are added to the residual stream: scaled down
        const bool into_stream = l + 1 < s.layers() && s.kind(l + 1) == LayerKind::Residual;
        normal(s.weight_offset[l], s.weight_count(l), into_stream ? residual : 0.02);
        break;
      }
      case LayerKind::Conv:
      case LayerKind::Pool:
      case LayerKind::Attention:
      case LayerKind::Residual: break;
    }
  }
  return w;
}

}  // namespace core
