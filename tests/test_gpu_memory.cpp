// Where the memory goes: Trainer::memory_usage() of both trainers against sizes worked out here from the model shape
// and the config (and against the sum over their core::TensorLayout), the GPU tally against the buffers it really
// holds, scaling with batch and hidden sizes, and the "memory" object of report.json.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "core/metrics.hpp"
#include "core/report.hpp"
#include "core/run_plan.hpp"
#include "cpu/trainer.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

namespace {

using core::Optimizer;

constexpr size_t kF = 4;  // bytes of an fp32, an int32 label or flag, a uint32 index

struct Setup {
  core::TrainConfig cfg;
  core::DataSplit data;
  core::ModelShape shape;
};

Setup spiral(std::vector<int> hidden, int batch, Optimizer opt) {
  Setup s;
  s.cfg.dataset = "spiral";
  s.cfg.hidden = std::move(hidden);
  s.cfg.batch = batch;
  s.cfg.optimizer = opt;
  s.cfg.readback_interval = 5;
  s.cfg.threads = 2;
  s.cfg.validation = true;
  s.data = core::make_spiral(3, 200, 50, 0.1f, 1);  // 600 training, 150 test points of 2 features, 3 classes
  s.shape = core::model_shape(s.cfg, s.data);
  return s;
}

// The GPU trainer (with the validation layer), or null (recorded as a skip) when this machine has no Vulkan device at
// all; any other set-up error fails the test.
std::unique_ptr<core::Trainer> make_gpu(const Setup& s, const std::vector<float>& params) {
  if (!test::vulkan_device_or_skip("the GPU trainer")) return nullptr;
  return gpu::make_trainer(s.cfg, s.data, params);
}

void check_usage(const core::MemoryUsage& got, const core::MemoryUsage& want) {
  CHECK(got.weights == want.weights);
  CHECK(got.master_weights == want.master_weights);
  CHECK(got.gradients == want.gradients);
  CHECK(got.optimizer_state == want.optimizer_state);
  CHECK(got.activations == want.activations);
  CHECK(got.workspace == want.workspace);
  CHECK(got.dataset == want.dataset);
  CHECK(got.total() == want.total());
}

// The tensors of the one layout both trainers hold (core::TensorLayout), worked out from the shapes; every buffer is
// at least 16 bytes. The GPU holds its copy of the dataset; the CPU reads the caller's.
core::MemoryUsage expected(const Setup& s, bool gpu) {
  const size_t B = static_cast<size_t>(s.cfg.batch), P = s.shape.param_count;
  const size_t F = static_cast<size_t>(s.shape.inputs()), K = static_cast<size_t>(s.shape.classes());
  const size_t train = static_cast<size_t>(s.data.train.count), test = static_cast<size_t>(s.data.test.count);
  core::MemoryUsage m;
  m.weights = P * kF;
  m.gradients = P * kF;
  m.optimizer_state = (s.cfg.optimizer == Optimizer::AdamW ? 2 : 1) * P * kF;
  m.activations = B * F * kF + 3 * B * kF;  // x_batch, y_batch, losses, batch_correct
  for (int h : s.cfg.hidden) m.activations += 3 * B * static_cast<size_t>(h) * kF;  // preact, act, dact
  m.activations += 2 * B * K * kF;                                                  // logits and dlogits
  m.workspace = (train + test) * kF                          // order, test order
                + static_cast<size_t>(s.cfg.readback_interval) * kF  // loss history
                + 2 * test * kF                              // evaluation losses and flags
                + B * kF                                     // prediction's classes
                + 16;                                        // the placeholder (the logits layer's preact)
  m.dataset = gpu ? (train * F + train + test * F + test) * kF : 0;
  return m;
}
core::MemoryUsage expected_gpu(const Setup& s) { return expected(s, true); }

// The same buffers in 16-bit storage (fp16 or bf16): tensors at 2 bytes per element, the fp32 masters beside the
// 16-bit weights copy, and for fp16 the loss scaler's 32-byte state and its per-slot history of 8 bytes.
core::MemoryUsage expected_gpu16(const Setup& s) {
  constexpr size_t kH = 2;
  const size_t B = static_cast<size_t>(s.cfg.batch), P = s.shape.param_count;
  const size_t F = static_cast<size_t>(s.shape.inputs()), K = static_cast<size_t>(s.shape.classes());
  const size_t R = static_cast<size_t>(s.cfg.readback_interval);
  core::MemoryUsage m = expected_gpu(s);
  m.weights = P * kH;
  m.master_weights = P * kF;
  m.gradients = P * kH;
  m.activations = B * F * kH + 3 * B * kF;  // x_batch (16-bit); labels, losses, flags stay 32-bit
  for (int h : s.cfg.hidden) m.activations += 3 * B * static_cast<size_t>(h) * kH;
  m.activations += 2 * B * K * kH;
  if (s.cfg.precision == core::Precision::FP16) m.workspace += 32 + R * 8;
  return m;
}

// Trains two steps and evaluates: nothing the trainer holds may grow (the figures are fixed at construction).
void exercise(core::Trainer& t, const Setup& s) {
  t.begin_epoch(core::epoch_order(s.data.train.count, s.cfg.seed, 0));
  t.step(0);
  t.step(static_cast<size_t>(s.cfg.batch));
  t.flush();
  (void)t.evaluate();
}

}  // namespace

TEST_CASE("memory_usage() of both trainers equals the sizes worked out from the model shape and the config") {
  const test::ValidationWatch validation;  // the GPU trainers here enable the layer
  for (Optimizer opt : {Optimizer::AdamW, Optimizer::SGD}) {
    CAPTURE(std::string(core::to_string(opt)));
    const Setup s = spiral({32, 16}, 32, opt);
    const auto params = core::init_parameters(s.shape, s.cfg.seed);

    auto cpu = cpu::make_trainer(s.cfg, s.data, params);
    const core::MemoryUsage cpu_mem = cpu->memory_usage();
    check_usage(cpu_mem, expected(s, false));
    exercise(*cpu, s);
    CHECK(cpu->memory_usage() == cpu_mem);

    auto gpu = make_gpu(s, params);
    if (!gpu) continue;
    const core::MemoryUsage gpu_mem = gpu->memory_usage();
    check_usage(gpu_mem, expected_gpu(s));
    // The per-category tally against the buffers the trainer holds, walked one by one.
    CHECK(gpu_mem.total() == gpu::allocated_buffer_bytes(*gpu));
    CHECK(gpu::allocated_buffer_bytes(*cpu) == 0);
    exercise(*gpu, s);
    CHECK(gpu->memory_usage() == gpu_mem);
    CHECK(gpu::allocated_buffer_bytes(*gpu) == gpu_mem.total());
  }
}

TEST_CASE("memory_usage(): parameters follow the hidden sizes, activations are linear in the batch") {
  const test::ValidationWatch validation;  // the GPU trainers here enable the layer
  const Setup small = spiral({32}, 16, Optimizer::AdamW);
  const Setup big_batch = spiral({32}, 64, Optimizer::AdamW);
  const Setup wide = spiral({64}, 16, Optimizer::AdamW);
  std::vector<std::unique_ptr<core::Trainer>> trainers;
  for (const Setup* s : {&small, &big_batch, &wide}) {
    const auto params = core::init_parameters(s->shape, s->cfg.seed);
    trainers.push_back(cpu::make_trainer(s->cfg, s->data, params));
  }
  for (const Setup* s : {&small, &big_batch, &wide}) {
    auto gpu = make_gpu(*s, core::init_parameters(s->shape, s->cfg.seed));
    if (!gpu) break;
    trainers.push_back(std::move(gpu));
  }
  for (size_t first = 0; first < trainers.size(); first += 3) {
    CAPTURE(std::string(trainers[first]->backend()));
    const core::MemoryUsage a = trainers[first]->memory_usage();
    const core::MemoryUsage b = trainers[first + 1]->memory_usage();  // batch x4
    const core::MemoryUsage w = trainers[first + 2]->memory_usage();  // hidden x2
    // The batch changes no parameter-sized buffer, and scales every activation by the same factor.
    CHECK(b.weights == a.weights);
    CHECK(b.gradients == a.gradients);
    CHECK(b.optimizer_state == a.optimizer_state);
    CHECK(b.dataset == a.dataset);
    CHECK(b.activations == 4 * a.activations);
    // Hidden 32 -> 64: the padded parameter count (each tensor starts at a multiple of 128 elements) grows from
    // 128 + 128 + 128 + 128 = 512 (2-32-3: W 64, b 32, W 96, b 3) to 128 + 128 + 256 + 128 = 640 (2-64-3).
    CHECK(small.shape.param_count == 512);
    CHECK(wide.shape.param_count == 640);
    CHECK(a.weights == small.shape.param_count * kF);
    CHECK(w.weights == wide.shape.param_count * kF);
    CHECK(w.weights > a.weights);
    CHECK(w.gradients == w.weights);
    CHECK(w.optimizer_state == 2 * w.weights);
    // 32 more hidden units per sample: 3 tensors (preact, act, dact) of B x 32 floats.
    CHECK(w.activations - a.activations == 3 * 16 * 32 * kF);
  }
}

TEST_CASE("report.json has a memory object per backend, in bytes, with its total") {
  core::BackendRun run;
  run.name = "gpu";
  run.memory.weights = 1;
  run.memory.gradients = 20;
  run.memory.optimizer_state = 300;
  run.memory.activations = 4000;
  run.memory.workspace = 50000;
  run.memory.dataset = 600000;
  core::BackendRun none;  // a backend that never made a trainer reports zeros
  none.name = "cpu";
  const nlohmann::json j = core::report_json(core::TrainConfig{}, {run, none});
  const auto& m = j["backends"][0]["memory"];
  for (const char* key : {"weights", "master_weights", "gradients", "optimizer_state", "activations", "workspace",
                          "dataset", "total"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(m["activations"] == 4000);
  CHECK(m["master_weights"] == 0);
  CHECK(m["total"] == 654321);
  CHECK(j["backends"][1]["memory"]["total"] == 0);
}

TEST_CASE("16-bit GPU trainers: memory_usage() equals the buffers held; weights, gradients and activations halve") {
  const test::ValidationWatch validation;  // the GPU trainers here enable the layer
  for (core::Precision precision : {core::Precision::FP16, core::Precision::BF16}) {
    CAPTURE(std::string(core::to_string(precision)));
    Setup s = spiral({32, 16}, 32, Optimizer::AdamW);
    const auto params = core::init_parameters(s.shape, s.cfg.seed);
    auto fp32 = make_gpu(s, params);
    if (!fp32) return;
    s.cfg.precision = precision;
    auto half = make_gpu(s, params);
    REQUIRE(half);
    const core::MemoryUsage m = half->memory_usage();
    check_usage(m, expected_gpu16(s));
    CHECK(m.total() == gpu::allocated_buffer_bytes(*half));
    exercise(*half, s);
    CHECK(half->memory_usage() == m);
    // Against the fp32 trainer of the same model: halved storage, the masters are the fp32 weights, state unchanged.
    const core::MemoryUsage f = fp32->memory_usage();
    CHECK(2 * m.weights == f.weights);
    CHECK(m.master_weights == f.weights);
    CHECK(2 * m.gradients == f.gradients);
    CHECK(m.optimizer_state == f.optimizer_state);
    const size_t B = static_cast<size_t>(s.cfg.batch);
    const size_t labels_losses_flags = 3 * B * kF;  // 32-bit in every precision
    CHECK(2 * (m.activations - labels_losses_flags) == f.activations - labels_losses_flags);
    // What the memory panel puts next to it: the same trainer counted in fp32 is the fp32 trainer.
    check_usage(half->memory_usage_fp32(), f);
    check_usage(fp32->memory_usage_fp32(), f);
  }
}

TEST_CASE("core::run_plan is what the GPU trainer allocates: the pre-flight's figure for an MLP and a CNN, in fp32 and fp16") {
  // The pre-flight (core::training_memory_need, gpu::device_fit_problem) reads core::run_plan; the trainer's buffers
  // (gpu::allocated_buffer_bytes: the sizes of the vk::Buffers it made, not its layout) must be that layout's bytes,
  // plus split-K's partials where this device splits a GEMM (chosen per device: at most a few MB).
  if (!test::vulkan_device_or_skip("the GPU trainer's allocations")) return;
  core::DataSplit images = core::make_random(28 * 28, 10, 64, 32, 7);
  for (core::Dataset* d : {&images.train, &images.test}) d->height = d->width = 28, d->channels = 1;
  for (const bool cnn : {false, true}) {
    for (const core::Precision precision : {core::Precision::FP32, core::Precision::FP16}) {
      CAPTURE(cnn);
      CAPTURE(std::string(core::to_string(precision)));
      core::TrainConfig c;
      c.dataset = "random";
      c.model = cnn ? core::ModelKind::CNN : core::ModelKind::MLP;
      c.conv = {2, 4};
      c.hidden = {16};
      c.batch = 8;
      c.precision = precision;
      const core::RunPlan run = core::run_plan(c, images);
      const auto t = gpu::make_trainer(c, images, core::init_parameters(run.shape, c.seed));
      size_t partials = 0;
      for (const core::PlanEntry& e : t->plan().entries) partials += e.split_k > 1;
      const size_t planned = run.layout.usage(true).total(), allocated = gpu::allocated_buffer_bytes(*t);
      INFO("planned " << planned << " bytes, allocated " << allocated << " bytes");
      if (partials == 0) CHECK(allocated == planned);
      CHECK(allocated >= planned);
      CHECK(allocated <= planned + (8u << 20));
    }
  }
}
