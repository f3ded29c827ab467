// The teaching toggles (core::Execution: --unfused, --sync-every-step, --submit-per-kernel) change what runs: the
// unfused plan's kernels and bytes, and the counts of kernels, submissions and host waits per step of each mode. (That
// they do not change what is computed, against the whole-step reference and bit for bit in fp32, is
// tests/test_train_step.cpp.) On the spiral with a small model, so that it runs in seconds on lavapipe.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "core/kernel_table.hpp"
#include "cpu/trainer.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"

namespace {

constexpr int kSteps = 20;
constexpr int kReadback = 10;

const core::DataSplit& data() {
  static const core::DataSplit d = core::make_spiral(3, 400, 100, 0.02f, 11);
  return d;
}

core::TrainConfig config(core::Activation act, core::Execution execution) {
  core::TrainConfig c;
  c.dataset = "spiral";
  c.hidden = {48, 24};
  c.activation = act;
  c.batch = 32;  // 37 steps per epoch: the 20 steps are read back only when the ring is full and at the end
  c.lr = 5e-3f;
  c.threads = 2;
  c.readback_interval = kReadback;
  c.validation = true;
  c.execution = execution;
  return c;
}

struct Run {
  core::ExecutionCounts counts;
  size_t kernels_per_step = 0;
};

// kSteps steps, read back only as the trainer itself decides (flush at the end), from core::init_parameters.
Run train(const std::string& backend, const core::TrainConfig& cfg) {
  const std::vector<float> init = core::init_parameters(core::model_shape(cfg, data()), cfg.seed);
  std::unique_ptr<core::Trainer> t =
      backend == "gpu" ? gpu::make_trainer(cfg, data(), init) : cpu::make_trainer(cfg, data(), init);
  const int per_epoch = core::steps_per_epoch(data().train.count, cfg.batch);
  for (int i = 0; i < kSteps; ++i) {
    if (i % per_epoch == 0) t->begin_epoch(core::epoch_order(data().train.count, cfg.seed, i / per_epoch));
    t->step(static_cast<size_t>(i % per_epoch) * static_cast<size_t>(cfg.batch));
  }
  Run r;
  t->flush();
  r.counts = t->execution_counts();
  r.kernels_per_step = t->plan().entries.size();
  return r;
}

std::vector<std::pair<std::string, core::Execution>> modes() {
  return {{"fused", {}},
          {"unfused", {.unfused = true}},
          {"sync every step", {.sync_every_step = true}},
          {"submit per kernel", {.submit_per_kernel = true}},
          {"all three", {true, true, true}}};
}

std::vector<std::string> backends() {
  std::vector<std::string> b = {"cpu"};
  if (test::vulkan_device_or_skip("the GPU half of the toggles test")) b.insert(b.begin(), "gpu");
  return b;
}

}  // namespace

TEST_CASE("the unfused plan: bias_add and act_forward after a GEMM without epilogue, and their extra bytes") {
  const core::ModelShape shape({2, 48, 24, 3});
  for (core::Precision p : {core::Precision::FP32, core::Precision::BF16}) {
    const core::StepPlan fused = core::build_step_plan(shape, 64, core::Activation::ReLU, core::Optimizer::AdamW, p);
    const core::StepPlan unfused =
        core::build_step_plan(shape, 64, core::Activation::ReLU, core::Optimizer::AdamW, p, true);
    CHECK(unfused.unfused);
    // 3 layers: a bias_add each, an act_forward for the 2 hidden ones.
    CHECK(unfused.entries.size() == fused.entries.size() + 5);
    int bias_adds = 0, act_forwards = 0;
    for (size_t i = 0; i < unfused.entries.size(); ++i) {
      const core::PlanEntry& e = unfused.entries[i];
      if (e.op == core::Op::matmul_forward) {
        CHECK_FALSE(e.epilogue);
        CHECK(unfused.entries.at(i + 1).op == core::Op::bias_add);  // right after its GEMM, same layer
        CHECK(unfused.entries.at(i + 1).layer == e.layer);
      }
      bias_adds += e.op == core::Op::bias_add;
      act_forwards += e.op == core::Op::act_forward;
    }
    CHECK(bias_adds == 3);
    CHECK(act_forwards == 2);
    CHECK(unfused.total_flops() == doctest::Approx(fused.total_flops()));  // the same arithmetic
    // The traffic the fused epilogue saves, from the shapes: per layer the (B,OC) output read and written again by
    // bias_add (and the bias read there instead of in the GEMM); per hidden layer act_forward reads it once more and
    // writes it twice (preact and out), where the fused GEMM wrote preact once.
    const double e = static_cast<double>(core::storage_bytes(p));
    double extra = 0;
    for (int l = 0; l < 3; ++l) {
      const double out = 64.0 * shape.fan_out(l) * e;
      extra += 2 * out;                 // bias_add: read + write
      if (l < 2) extra += 3 * out - out;  // act_forward: read + 2 writes, minus the fused GEMM's preact write
    }
    CHECK(unfused.total_bytes() - fused.total_bytes() == doctest::Approx(extra));
  }
}

TEST_CASE("kernels, submissions and host waits per step in each mode") {
  for (const std::string& backend : backends()) {
    CAPTURE(backend);
    const Run fused = train(backend, config(core::Activation::ReLU, {}));
    for (const auto& [name, execution] : modes()) {
      CAPTURE(name);
      const Run r = train(backend, config(core::Activation::ReLU, execution));
      const core::ExecutionCounts& c = r.counts;
      CHECK(c.steps == kSteps);
      CHECK(r.kernels_per_step == fused.kernels_per_step + (execution.unfused ? 5 : 0));
      CHECK(c.kernels == static_cast<long>(kSteps * r.kernels_per_step));
      if (backend == "gpu") {
        const long k = static_cast<long>(r.kernels_per_step);
        if (execution.submit_per_kernel) {
          CHECK(c.submits == kSteps * k);  // one submission per kernel...
          // ...and a wait for each, plus (without sync) the read-backs of the full ring and at the end.
          CHECK(c.host_waits == kSteps * k + (execution.sync_every_step ? kSteps : kSteps / kReadback));
        } else {
          CHECK(c.submits == kSteps);  // one command buffer per step
          CHECK(c.host_waits == (execution.sync_every_step ? kSteps : kSteps / kReadback));
        }
      } else {
        // The CPU waits for every hand-off to its pool; its toggles other than --unfused change nothing (its
        // kernels are already one pool dispatch each, and its loss is on the host after every step).
        CHECK(c.submits == c.host_waits);
        if (!execution.unfused) CHECK(c.submits == fused.counts.submits);
        if (execution.unfused) CHECK(c.submits >= fused.counts.submits);
      }
    }
  }
}
