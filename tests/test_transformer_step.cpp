// The transformer's whole-step test: both backends train a small transformer (two blocks, odd sizes where the kernels
// have edges) on the synthetic reversal task for a few steps from the same weights and batches, and every step's loss
// and the weights after it are compared with the double reference (cpu/transformer_reference.hpp) stepping with the
// same SGD update. The reference is written apart from the kernels (plain loops per sequence), so a binding, a
// residual connection, the tied output projection or a LayerNorm's accumulation that goes wrong in the plan or the
// layout moves these figures by orders of magnitude more than fp32's rounding (~1e-6 relative).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/config.hpp"
#include "core/text_data.hpp"
#include "cpu/trainer.hpp"
#include "cpu/transformer_reference.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

namespace {

constexpr int kBatch = 6, kSteps = 3, kDigits = 5;  // T = 10: not a multiple of the attention's tiles
constexpr float kLr = 0.05f;

const core::DataSplit& data() {
  static const core::DataSplit d = [] {
    core::DataSplit s;
    s.train = core::token_dataset(core::reverse_task_batch(kDigits, 11, 0, kBatch * kSteps), core::kReverseVocab,
                                  "reverse");
    s.test = core::token_dataset(core::reverse_task_batch(kDigits, 12, 0, 7), core::kReverseVocab, "reverse");
    return s;
  }();
  return d;
}

core::TrainConfig config(const std::string& backend, core::Precision precision) {
  core::TrainConfig c;
  c.model = core::ModelKind::Transformer;
  c.embed = 12;  // 3 heads of 4 features: a width not a multiple of the GEMMs' tiles
  c.heads = 3;
  c.layers = 2;
  c.activation = core::Activation::GELU;
  c.optimizer = core::Optimizer::SGD;  // its first steps: w -= lr (grad + momentum's sum), linear in the gradients
  c.momentum = 0;
  c.weight_decay = 0;
  c.lr = kLr;
  c.batch = kBatch;
  c.precision = precision;
  c.backends = {backend};
  c.threads = 2;
  c.seed = 5;
  return c;
}

// The reference's flat parameters (cpu::TransformerParams) from the trainers' (ModelShape layout), and back.
struct Mapping {
  std::vector<std::pair<size_t, size_t>> ranges;  // (shape offset, reference offset) per tensor
  std::vector<size_t> counts;
};
Mapping mapping(const core::ModelShape& s, const cpu::TransformerParams& p) {
  Mapping m;
  auto map = [&](size_t from, size_t to, size_t n) {
    m.ranges.push_back({from, to});
    m.counts.push_back(n);
  };
  map(s.weight_offset[0], p.wte, s.weight_count(0));
  map(s.bias_offset[0], p.wpe, s.bias_count(0));
  for (int b = 0; b < s.blocks(); ++b) {
    const int l = 1 + b * core::ModelShape::kBlockLayers;
    const auto& k = p.blocks[size_t(b)];
    const std::pair<int, std::pair<size_t, size_t>> layers[] = {
        {l, {k.ln1_g, k.ln1_b}}, {l + 1, {k.qkv_w, k.qkv_b}}, {l + 3, {k.proj_w, k.proj_b}},
        {l + 5, {k.ln2_g, k.ln2_b}}, {l + 6, {k.fc_w, k.fc_b}}, {l + 7, {k.out_w, k.out_b}}};
    for (const auto& [layer, at] : layers) {
      map(s.weight_offset[size_t(layer)], at.first, s.weight_count(layer));
      map(s.bias_offset[size_t(layer)], at.second, s.bias_count(layer));
    }
  }
  const int lnf = s.layers() - 2;
  map(s.weight_offset[size_t(lnf)], p.lnf_g, s.weight_count(lnf));
  map(s.bias_offset[size_t(lnf)], p.lnf_b, s.bias_count(lnf));
  return m;
}

struct Reference {
  std::vector<double> losses;
  std::vector<double> params;  // after the steps, the reference's layout
};

// Sequences `rows` of a token dataset as the reference reads them (the targets that do not count masked).
core::TokenBatch batch_of(const core::Dataset& d, std::span<const uint32_t> rows) {
  const size_t T = size_t(d.features);
  core::TokenBatch b{int(rows.size()), d.features, {}, {}, {}};
  for (uint32_t row : rows)
    for (size_t at = row * T; at < (row + 1) * T; ++at) {
      b.x.push_back(int32_t(d.x[at]));
      b.y.push_back(d.y[at] < 0 ? 0 : d.y[at]);
      b.mask.push_back(d.y[at] < 0 ? 0 : 1);
    }
  return b;
}

// The test set's sequences, all of them.
core::TokenBatch test_batch() {
  std::vector<uint32_t> all(size_t(data().test.count));
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint32_t(i);
  return batch_of(data().test, all);
}

Reference reference(const cpu::TransformerShape& ts, const std::vector<double>& init) {
  Reference r{{}, init};
  const std::vector<uint32_t> order = core::epoch_order(data().train.count, 5, 0);
  for (int step = 0; step < kSteps; ++step) {
    const core::TokenBatch batch = batch_of(data().train, std::span(order).subspan(size_t(step * kBatch), kBatch));
    const cpu::TransformerResult res = cpu::transformer_step_reference(ts, r.params, batch, true);
    r.losses.push_back(res.loss);
    for (size_t i = 0; i < r.params.size(); ++i) r.params[i] -= double(kLr) * res.grads[i];
  }
  return r;
}

// One configuration's model on both sides: its shape, the reference's, where each tensor lies in both layouts, the
// initial weights in both, and the reference's steps from them.
struct Setup {
  core::ModelShape shape;
  cpu::TransformerShape ts;
  Mapping m;
  std::vector<float> init;
  std::vector<double> init_ref;
  Reference ref;
};
Setup setup(const core::TrainConfig& cfg) {
  Setup s;
  s.shape = core::model_shape(cfg, data());
  s.ts = {core::kReverseVocab, s.shape.positions, cfg.embed, cfg.heads, cfg.layers, true};
  const cpu::TransformerParams layout = cpu::transformer_params(s.ts);
  s.m = mapping(s.shape, layout);
  s.init = core::init_parameters(s.shape, cfg.seed);
  s.init_ref.assign(layout.count, 0.0);
  for (size_t i = 0; i < s.m.ranges.size(); ++i)
    for (size_t j = 0; j < s.m.counts[i]; ++j)
      s.init_ref[s.m.ranges[i].second + j] = s.init[s.m.ranges[i].first + j];
  s.ref = reference(s.ts, s.init_ref);
  return s;
}

// The trainer's first kSteps steps of the epoch, their records.
std::vector<core::StepRecord> run_steps(core::Trainer& trainer, const core::TrainConfig& cfg) {
  trainer.begin_epoch(core::epoch_order(data().train.count, cfg.seed, 0));
  for (int s = 0; s < kSteps; ++s) trainer.step(size_t(s) * kBatch);
  std::vector<core::StepRecord> records = trainer.flush();
  REQUIRE(records.size() == size_t(kSteps));
  return records;
}

void check_backend(core::Trainer& trainer, const core::TrainConfig& cfg) {
  const Setup su = setup(cfg);
  const core::ModelShape& shape = su.shape;
  const cpu::TransformerShape& ts = su.ts;
  const Mapping& m = su.m;
  const std::vector<float>& init = su.init;
  const std::vector<double>& init_ref = su.init_ref;
  const Reference& ref = su.ref;
  const std::vector<core::StepRecord> records = run_steps(trainer, cfg);
  for (int s = 0; s < kSteps; ++s) {
    CAPTURE(s);
    CHECK(std::fabs(records[size_t(s)].loss - ref.losses[size_t(s)]) <= 1e-5 * ref.losses[size_t(s)]);
  }
  // Every tensor's change over the steps: its squared error against the reference's, relative to that change.
  const std::vector<float> after = trainer.parameters();
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    double num = 0, den = 0, stored = 0;
    for (size_t j = 0; j < m.counts[i]; ++j) {
      const double got = double(after[m.ranges[i].first + j]) - init[m.ranges[i].first + j];
      const double want = ref.params[m.ranges[i].second + j] - init_ref[m.ranges[i].second + j];
      num += (got - want) * (got - want);
      den += want * want;
      // The fp32 weights round each step's update to their precision: half an ulp of the weight per step (a
      // LayerNorm's gain of 1 cannot move by less than 6e-8).
      const double ulp = std::ldexp(std::fabs(double(init[m.ranges[i].first + j])) + 1e-30, -23);
      stored += (kSteps * ulp / 2) * (kSteps * ulp / 2);
    }
    CAPTURE(i);
    CHECK(den > 0);  // every tensor learns (a gradient that never arrives would leave it 0)
    CHECK(num <= 1e-8 * den + stored);
  }
  // The next token each test position predicts (predict(): the forward kernels and argmax), against the reference's
  // logits with the trained weights; a position whose two best logits lie within fp32's error may go either way.
  const core::TokenBatch test = test_batch();
  const std::vector<int32_t> predicted = trainer.predict(data().test.x, size_t(data().test.count));
  const cpu::TransformerResult logits = cpu::transformer_step_reference(ts, ref.params, test, false);
  REQUIRE(predicted.size() == test.x.size());
  const size_t V = size_t(core::kReverseVocab);
  int checked = 0;
  for (size_t r = 0; r < predicted.size(); ++r) {
    const double* z = &logits.logits[r * V];
    size_t best = 0;
    for (size_t v = 1; v < V; ++v)
      if (z[v] > z[best]) best = v;
    double second = -1e300;
    for (size_t v = 0; v < V; ++v)
      if (v != best) second = std::max(second, z[v]);
    if (z[best] - second < 1e-4) continue;
    CAPTURE(r);
    CHECK(predicted[r] == int32_t(best));
    ++checked;
  }
  CHECK(checked > int(predicted.size()) / 2);
  // Greedy decoding (the Model tab's text): from each test sequence's first half, the reference's own greedy
  // continuation, token by token from its logits; positions whose two best logits are within fp32's error end the
  // comparison of that sequence (from there the two may rightly part).
  const int T = shape.positions, prompt = T / 2;
  const std::vector<int32_t> written = core::generate_greedy(trainer, data().test.x, test.B, T, prompt);
  REQUIRE(written.size() == test.x.size());
  core::TokenBatch want = test;
  int compared = 0;
  for (int p = prompt - 1; p + 1 < T; ++p) {
    const cpu::TransformerResult z = cpu::transformer_step_reference(ts, ref.params, want, false);
    for (int b = 0; b < test.B; ++b) {
      const size_t at = size_t(b) * size_t(T) + size_t(p);
      const double* row = &z.logits[at * V];
      size_t best = 0;
      for (size_t v = 1; v < V; ++v)
        if (row[v] > row[best]) best = v;
      want.x[at + 1] = int32_t(best);
    }
  }
  for (int b = 0; b < test.B; ++b)
    for (int t = 0; t < T; ++t) {
      const size_t at = size_t(b) * size_t(T) + size_t(t);
      if (written[at] != want.x[at]) break;
      ++compared;
    }
  CHECK(compared >= test.B * T * 3 / 4);  // most positions agree (ties end a sequence's comparison early)
  for (int b = 0; b < test.B; ++b)  // the prompts are kept
    for (int t = 0; t < prompt; ++t) CHECK(written[size_t(b * T + t)] == int32_t(data().test.x[size_t(b * T + t)]));
}

}  // namespace

TEST_CASE("transformer: the CPU's steps match the double reference") {
  const core::TrainConfig cfg = config("cpu", core::Precision::FP32);
  auto trainer = cpu::make_trainer(cfg, data(), core::init_parameters(core::model_shape(cfg, data()), cfg.seed));
  check_backend(*trainer, cfg);
}

// 16-bit storage rounds every activation, weight and gradient to 8 (bf16) or 11 (fp16) bits: the same steps stay
// within a few percent of the fp32 reference (a binding that read fp32 bits as 16-bit ones, or the other way round,
// would be off by orders of magnitude), and fp16's loss scaling keeps its gradients finite.
TEST_CASE("transformer: 16-bit storage stays near the reference on both backends") {
  const bool gpu = test::vulkan_device_or_skip("transformer in 16-bit on the GPU");
  // The precision is the storage's only: the model, its initial weights and the reference's steps are fp32's.
  const Setup su = setup(config("cpu", core::Precision::FP32));
  const Reference& ref = su.ref;
  for (const core::Precision p : {core::Precision::FP16, core::Precision::BF16})
    for (const std::string backend : {"cpu", "gpu"}) {
      if (backend == "gpu" && !gpu) continue;
      CAPTURE(backend);
      CAPTURE(core::to_string(p));
      const core::TrainConfig cfg = config(backend, p);
      auto trainer = backend == "cpu" ? cpu::make_trainer(cfg, data(), su.init)
                                      : gpu::make_trainer(cfg, data(), su.init);
      const std::vector<core::StepRecord> records = run_steps(*trainer, cfg);
      for (int s = 0; s < kSteps; ++s) {
        CAPTURE(s);
        CHECK_FALSE(records[size_t(s)].skipped);
        CHECK(std::fabs(records[size_t(s)].loss - ref.losses[size_t(s)]) <= 0.03 * ref.losses[size_t(s)]);
      }
    }
}

TEST_CASE("transformer: the GPU's steps match the double reference") {
  if (!test::vulkan_device_or_skip("transformer on the GPU")) return;
  const core::TrainConfig cfg = config("gpu", core::Precision::FP32);
  auto trainer = gpu::make_trainer(cfg, data(), core::init_parameters(core::model_shape(cfg, data()), cfg.seed));
  check_backend(*trainer, cfg);
}

// --attention naive: the same steps through the seven naive kernels and the scores kept in memory (the reference is
// the same: the math does not change, only where the scores live), in fp32 and, in bf16 (the coarsest rounding of
// the stored scores and probabilities), within the 16-bit case's few percent.
TEST_CASE("transformer: naive attention's steps match the double reference on both backends") {
  const bool gpu = test::vulkan_device_or_skip("transformer with naive attention on the GPU");
  const Setup su = setup(config("cpu", core::Precision::FP32));
  for (const std::string backend : {"cpu", "gpu"}) {
    if (backend == "gpu" && !gpu) continue;
    CAPTURE(backend);
    core::TrainConfig cfg = config(backend, core::Precision::FP32);
    cfg.execution.naive_attention = true;
    auto trainer = backend == "cpu" ? cpu::make_trainer(cfg, data(), su.init) : gpu::make_trainer(cfg, data(), su.init);
    REQUIRE(trainer->plan().naive_attention);
    check_backend(*trainer, cfg);
    cfg.precision = core::Precision::BF16;
    auto bf16 = backend == "cpu" ? cpu::make_trainer(cfg, data(), su.init) : gpu::make_trainer(cfg, data(), su.init);
    const std::vector<core::StepRecord> records = run_steps(*bf16, cfg);
    for (int s = 0; s < kSteps; ++s) {
      CAPTURE(s);
      CHECK(std::fabs(records[size_t(s)].loss - su.ref.losses[size_t(s)]) <= 0.03 * su.ref.losses[size_t(s)]);
    }
  }
}
