// run::Session with fake trainers: the loop's order of calls, read-back cadence, epoch records, identical start
// weights, and a failing backend that leaves the other one training.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <chrono>
#include <thread>
#include <utility>

#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "run/session.hpp"
#include "run/worker.hpp"

namespace {

constexpr int kCount = 100, kBatch = 10, kSteps = kCount / kBatch;

core::DataSplit tiny_data() {
  core::DataSplit d;
  for (core::Dataset* s : {&d.train, &d.test}) {
    s->name = "tiny";
    s->count = s == &d.train ? kCount : 20;
    s->features = 2;
    s->classes = 3;
    s->x.assign(static_cast<size_t>(s->count) * 2, 0.5f);
    s->y.assign(static_cast<size_t>(s->count), 1);
  }
  return d;
}

core::TrainConfig tiny_config() {
  core::TrainConfig cfg;
  cfg.hidden = {4};
  cfg.batch = kBatch;
  cfg.epochs = 2;
  cfg.readback_interval = 3;
  cfg.seed = 7;
  return cfg;
}

// What a fake trainer saw, for the checks.
struct Trace {
  std::mutex mutex;
  std::vector<float> init_params;
  std::vector<std::vector<uint32_t>> orders;  // one per begin_epoch
  std::vector<size_t> firsts;                 // every step(first)
  std::vector<size_t> flush_sizes;
  int evaluations = 0;
  std::function<void(core::StepRecord&)> shape_record;  // if set, edits every record (fp16 skips, a NaN loss)
};

class FakeTrainer : public core::Trainer {
 public:
  FakeTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, Trace& trace, long fail_at_step)
      : plan_(core::build_step_plan(core::ModelShape({data.train.features, cfg.hidden[0], data.train.classes}),
                                    cfg.batch, cfg.activation, cfg.optimizer)),
        trace_(trace),
        fail_at_step_(fail_at_step) {}

  const char* backend() const override { return "fake"; }
  std::string device_name() const override { return "Fake device"; }
  const core::StepPlan& plan() const override { return plan_; }
  void begin_epoch(std::span<const uint32_t> order) override {
    std::lock_guard lock(trace_.mutex);
    trace_.orders.emplace_back(order.begin(), order.end());
  }
  void step(size_t first) override {
    if (next_step_ == fail_at_step_) throw core::Error(core::ErrorKind::Vulkan, "device lost (fake)");
    {
      std::lock_guard lock(trace_.mutex);
      trace_.firsts.push_back(first);
    }
    core::StepRecord r;
    r.step = next_step_;
    r.loss = 1.0f + static_cast<float>(next_step_);  // loss = 1 + global step index
    r.kernel_ms.assign(plan_.entries.size(), 0.5);
    r.step_ms = 0.5 * static_cast<double>(plan_.entries.size());
    if (trace_.shape_record) trace_.shape_record(r);
    queued_.push_back(r);
    ++next_step_;
  }
  std::vector<core::StepRecord> flush() override {
    std::lock_guard lock(trace_.mutex);
    trace_.flush_sizes.push_back(queued_.size());
    return std::exchange(queued_, {});
  }
  core::EvalResult evaluate() override {
    std::lock_guard lock(trace_.mutex);
    ++trace_.evaluations;
    return {0.5, 0.75};
  }
  std::vector<float> parameters() override { return {}; }
  core::TrainerState export_state() override { return {}; }
  void import_state(const core::TrainerState&) override {}
  void set_learning_rate(float lr) override { lr_ = lr; }
  float learning_rate() const override { return lr_; }
  core::MemoryUsage memory_usage() const override {
    core::MemoryUsage m;
    m.weights = plan_.shape.param_count * 4;
    return m;
  }
  core::MemoryUsage memory_usage_fp32() const override { return memory_usage(); }
  std::string unsupported_reason(core::Precision) const override { return {}; }

 private:
  core::StepPlan plan_;
  Trace& trace_;
  long fail_at_step_;
  long next_step_ = 0;
  float lr_ = 0;
  std::vector<core::StepRecord> queued_;
};

run::BackendSpec fake_spec(const std::string& name, Trace& trace, long fail_at_step = -1) {
  return {name, [&trace, fail_at_step](const core::TrainConfig& cfg, const core::DataSplit& data,
                                       const std::vector<float>& init) -> std::unique_ptr<core::Trainer> {
            {
              std::lock_guard lock(trace.mutex);
              trace.init_params = init;
            }
            return std::make_unique<FakeTrainer>(cfg, data, trace, fail_at_step);
          }};
}

run::BackendSpec broken_spec(const std::string& name) {
  return {name, [](const core::TrainConfig&, const core::DataSplit&,
                   const std::vector<float>&) -> std::unique_ptr<core::Trainer> {
            throw core::Error(core::ErrorKind::Vulkan, "no Vulkan loader (fake)");
          }};
}

struct RecordingObserver : run::Observer {
  std::mutex mutex;
  std::vector<std::pair<std::string, int>> steps;  // backend, step_in_epoch
  std::vector<std::string> epochs, errors, starts;
  void on_start(const std::string& b, const std::string&) override {
    std::lock_guard lock(mutex);
    starts.push_back(b);
  }
  void on_steps(const std::string& b, std::span<const core::StepRecord>, int, int step, int steps_per_epoch) override {
    std::lock_guard lock(mutex);
    CHECK(steps_per_epoch == kSteps);
    steps.emplace_back(b, step);
  }
  void on_epoch(const std::string& b, const core::EpochRecord&) override {
    std::lock_guard lock(mutex);
    epochs.push_back(b);
  }
  void on_error(const std::string& b, const std::string& message) override {
    std::lock_guard lock(mutex);
    errors.push_back(b + ": " + message);
  }
};

}  // namespace

TEST_CASE("a session runs epochs of steps in the shared order, reading back every N steps") {
  const core::DataSplit data = tiny_data();
  const core::TrainConfig cfg = tiny_config();
  Trace a, b;
  RecordingObserver observer;
  const auto runs = run::train(cfg, data, {fake_spec("gpu", a), fake_spec("cpu", b)}, observer);

  REQUIRE(runs.size() == 2);
  for (const Trace* t : {&a, &b}) {
    REQUIRE(t->orders.size() == 2);
    CHECK(t->orders[0] == core::epoch_order(kCount, cfg.seed, 0));
    CHECK(t->orders[1] == core::epoch_order(kCount, cfg.seed, 1));
    REQUIRE(t->firsts.size() == 2 * kSteps);
    for (int s = 0; s < kSteps; ++s) CHECK(t->firsts[static_cast<size_t>(s)] == static_cast<size_t>(s * kBatch));
    // Read back by elapsed time: the first step alone (the pace is not known yet), then as many steps as take
    // kReadbackSeconds, never more than readback_interval (3) at once; every step exactly once.
    REQUIRE_FALSE(t->flush_sizes.empty());
    CHECK(t->flush_sizes.front() == 1);
    size_t total = 0;
    for (size_t n : t->flush_sizes) {
      CHECK(n <= 3);
      total += n;
    }
    CHECK(total == 2 * kSteps);
    CHECK(t->evaluations == 2);
  }
  const core::ModelShape shape({2, 4, 3});
  CHECK(a.init_params == core::init_parameters(shape, cfg.seed));
  CHECK(b.init_params == a.init_params);

  for (const auto& r : runs) {
    CHECK(r.error.empty());
    CHECK(r.finished);
    CHECK(r.device == "Fake device");
    CHECK(r.memory.weights == core::ModelShape({2, 4, 3}).param_count * 4);  // recorded when the trainer was made
    REQUIRE(r.step_losses.size() == 2 * kSteps);
    CHECK(r.step_losses[5] == 6.0f);
    CHECK(r.kernels.steps() == 2 * kSteps - 1);  // the first step is warm-up
    REQUIRE(r.epochs.size() == 2);
    CHECK(r.epochs[0].epoch == 1);
    CHECK(r.epochs[0].train_loss == doctest::Approx(5.5));   // mean of 1..10
    CHECK(r.epochs[1].train_loss == doctest::Approx(15.5));  // mean of 11..20
    CHECK(r.epochs[1].test_accuracy == 0.75);
    CHECK(r.epochs[0].samples_per_s > 0);
    CHECK(r.epochs[0].samples_per_s == doctest::Approx(kCount / r.epochs[0].seconds));
  }
  CHECK(runs[0].name == "gpu");
  CHECK(runs[1].name == "cpu");
  std::vector<int> gpu_steps;
  for (const auto& [backend, step] : observer.steps)
    if (backend == "gpu") gpu_steps.push_back(step);
  // step_in_epoch grows within an epoch and reaches its end (10) once per epoch.
  REQUIRE_FALSE(gpu_steps.empty());
  CHECK(gpu_steps.front() == 1);
  CHECK(std::count(gpu_steps.begin(), gpu_steps.end(), kSteps) == 2);
  for (size_t i = 1; i < gpu_steps.size(); ++i)
    CHECK((gpu_steps[i] > gpu_steps[i - 1] || gpu_steps[i - 1] == kSteps));
  CHECK(observer.epochs.size() == 4);
  CHECK(observer.errors.empty());
}

TEST_CASE("a backend that cannot start or fails mid-run stops alone; the other keeps training") {
  const core::DataSplit data = tiny_data();
  for (bool sequential : {false, true}) {
    CAPTURE(sequential);
    core::TrainConfig cfg = tiny_config();
    cfg.sequential = sequential;
    Trace cpu, failing;
    RecordingObserver observer;
    const auto runs = run::train(cfg, data, {broken_spec("gpu"), fake_spec("cpu", cpu), fake_spec("mid", failing, 13)},
                                 observer);
    REQUIRE(runs.size() == 3);
    CHECK(runs[0].error == "no Vulkan loader (fake)");
    CHECK(runs[0].finished);
    CHECK(runs[0].epochs.empty());
    CHECK(runs[1].error.empty());
    CHECK(runs[1].epochs.size() == 2);
    CHECK(runs[2].error == "device lost (fake)");
    CHECK(runs[2].epochs.size() == 1);  // the epoch finished before step 13 is kept
    // The first epoch's 10 steps, and those of steps 10..12 that were read back before step 13 failed.
    CHECK(runs[2].step_losses.size() >= 10);
    CHECK(runs[2].step_losses.size() <= 13);
    CHECK(observer.errors.size() == 2);
  }
}

TEST_CASE("snapshot() is available before, during and after a run") {
  const core::DataSplit data = tiny_data();
  Trace t;
  RecordingObserver observer;
  run::Session session(tiny_config(), data, {fake_spec("cpu", t)}, observer);
  auto before = session.snapshot();
  REQUIRE(before.size() == 1);
  CHECK(before[0].name == "cpu");
  CHECK_FALSE(before[0].finished);
  session.start();
  (void)session.snapshot();
  session.wait();
  const auto after = session.snapshot();
  CHECK(after[0].finished);
  CHECK(after[0].epochs.size() == 2);
}

TEST_CASE("fp16 overflows read back from a trainer: one marker per run of skipped steps, counts and the loss scale") {
  Trace trace;
  // Steps 2, 3, 4 overflow at scales 2^16, 2^15, 2^14; step 5 runs at 2^13. Step 9 overflows once more.
  trace.shape_record = [](core::StepRecord& r) {
    const bool skip = (r.step >= 2 && r.step <= 4) || r.step == 9;
    r.skipped = skip;
    r.loss_scale = r.step <= 2 ? 65536.0f : r.step <= 9 ? std::max(8192.0f, 65536.0f / float(1 << (r.step - 2))) : 4096;
  };
  core::TrainConfig cfg = tiny_config();
  cfg.precision = core::Precision::FP16;
  run::Observer observer;
  auto runs = run::train(cfg, tiny_data(), {fake_spec("fake", trace)}, observer);
  const core::BackendRun& r = runs.at(0);
  CHECK(r.error.empty());
  CHECK(r.skipped_steps == 4);
  CHECK(r.loss_scale == 4096.0f);
  REQUIRE(r.markers.size() == 2);
  CHECK(r.markers[0].step == 2);
  CHECK(r.markers[0].label == "fp16 overflow: 3 steps skipped, scale 65536 -> 8192");
  CHECK(r.markers[1].step == 9);
  CHECK(r.markers[1].label == "fp16 overflow: 1 step skipped, scale 8192 -> 4096");
  REQUIRE(r.precisions.size() == 1);
  CHECK(r.precisions[0].skipped == 4);  // step 0 (warm-up) is not counted, and it was not skipped
  CHECK(r.precisions[0].steps == static_cast<long>(r.step_losses.size()) - 1);
}

TEST_CASE("divergence stops the backend with a clear message: fp16 overflow at every scale, or a NaN loss") {
  SUBCASE("fp16: still overflowing at a loss scale of 2^-24") {
    Trace trace;
    trace.shape_record = [](core::StepRecord& r) {
      r.skipped = r.step >= 1;
      r.loss_scale = std::ldexp(1.0f, -20 - static_cast<int>(r.step));  // 2^-20, 2^-21, ...
    };
    core::TrainConfig cfg = tiny_config();
    cfg.precision = core::Precision::FP16;
    run::Observer observer;
  auto runs = run::train(cfg, tiny_data(), {fake_spec("fake", trace)}, observer);
    const std::string& e = runs.at(0).error;
    CHECK(e.find("fp16 training stopped at step 5") != std::string::npos);  // step index 4: scale 2^-24
    CHECK(e.find("Lower the learning rate") != std::string::npos);
    CHECK(runs.at(0).epochs.empty());
  }
  SUBCASE("fp32: the loss became NaN") {
    Trace trace;
    trace.shape_record = [](core::StepRecord& r) {
      if (r.step >= 3) r.loss = std::nanf("");
    };
    run::Observer observer;
    auto runs = run::train(tiny_config(), tiny_data(), {fake_spec("fake", trace)}, observer);
    const std::string& e = runs.at(0).error;
    CHECK(e.find("training stopped at step 4: the loss is nan (fp32)") != std::string::npos);
  }
}

TEST_CASE("read-backs follow elapsed time: about every 250 ms, and after every step when a step is slower") {
  using run::steps_per_readback;
  CHECK(steps_per_readback(0, 10) == 1);        // pace unknown: the first step is read back alone
  CHECK(steps_per_readback(-1, 10) == 1);
  CHECK(steps_per_readback(0.001, 10) == 10);   // 1 ms steps: the ring's capacity
  CHECK(steps_per_readback(0.001, 1000) == 250);
  CHECK(steps_per_readback(0.05, 1000) == 5);   // 5 x 50 ms = 250 ms
  CHECK(steps_per_readback(0.136, 10) == 1);    // lavapipe at batch 128: every step
  CHECK(steps_per_readback(2.5, 10) == 1);      // slower than 250 ms: every step
  CHECK(steps_per_readback(0.001, 0) == 1);     // a ring of 0 is treated as 1

  // Steps slower than 250 ms: each is read back on its own, whatever the ring allows (a loaded machine only makes
  // steps slower, so this holds there too).
  Trace trace;
  trace.shape_record = [](core::StepRecord&) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
  core::TrainConfig cfg = tiny_config();
  cfg.readback_interval = 10;
  cfg.epochs = 1;
  core::DataSplit data = tiny_data();
  data.train = core::take_first(data.train, 4 * kBatch);
  run::Observer observer;
  const auto runs = run::train(cfg, data, {fake_spec("gpu", trace)}, observer);
  REQUIRE(runs.at(0).step_losses.size() == 4);
  size_t nonempty = 0;
  for (size_t n : trace.flush_sizes) {
    CHECK(n <= 1);
    nonempty += n;
  }
  CHECK(nonempty == 4);
}

TEST_CASE("fair mode: a backend whose whole epoch is shorter than a read-back still passes the turn") {
  // Found in a lesson at --limit 2048: the CPU's epochs (8 steps, ~60 ms) ended before any read-back in the epoch
  // was due, the epoch's last read-back did not pass the turn, and the GPU waited for ever for its turn.
  Trace a, b;
  for (Trace* t : {&a, &b})
    t->shape_record = [](core::StepRecord&) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  core::TrainConfig cfg = tiny_config();
  cfg.epochs = core::kUntilStopped;
  cfg.readback_interval = 64;  // more steps than an epoch has (10): only the epoch's end reads back
  run::SessionOptions options;
  options.keep_alive = true;
  options.fair = true;
  run::Observer observer;
  run::Session session(cfg, std::make_shared<const core::DataSplit>(tiny_data()),
                       {fake_spec("gpu", a), fake_spec("cpu", b)}, observer, options);
  session.start();
  const auto steps = [&](size_t i) { return session.snapshot().at(i).step_losses.size(); };
  // Slices of 0.5 s: within 10 s each backend has had several turns; waiting for the turn, one would have none.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((steps(0) < 3 * kSteps || steps(1) < 3 * kSteps) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(steps(0) >= 3 * kSteps);
  CHECK(steps(1) >= 3 * kSteps);
  session.request_stop();
  session.wait();
}
