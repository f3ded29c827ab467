// Live commands on a running session (what the dashboard's controls do), with the real CPU trainer and, where a
// Vulkan device exists, the GPU trainer: pause / single step, a batch-size change that keeps the weights and
// continues the loss curve, a refused batch size, a learning-rate change, reset; batch changes at the last steps of
// an epoch. Where a test checks losses, every step is taken at a known place (paused from the start, single steps),
// so the figures are the same in every run; waits are for a state (paused, a step count), bounded at 60 s.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "eventually.hpp"
#include "gpu_test_util.hpp"
#include "run/data.hpp"
#include "run/loader.hpp"
#include "run/session.hpp"

namespace {

using namespace std::chrono_literals;

// Remembers the trainer a spec made last, so that the test can read its weights while the worker is paused.
struct Tracker {
  std::mutex mutex;
  core::Trainer* last = nullptr;
  core::StepPlan last_plan;  // the plan of the last trainer made, read from the trainer (it may be gone later)
};

run::BackendSpec tracked(const std::string& name, run::TrainerFactory make, Tracker& tracker) {
  return {name, [make, &tracker](const core::TrainConfig& c, const core::DataSplit& d, const std::vector<float>& p) {
            auto t = make(c, d, p);
            if (c.input.host()) t->set_batch_source(run::make_loader(c, d));  // as run::backends_from_config
            std::lock_guard lock(tracker.mutex);
            tracker.last = t.get();
            tracker.last_plan = t->plan();
            return t;
          }};
}

// Whether the GPU backend takes part: only when this machine has no Vulkan device at all does it not (recorded as a
// skip); any other failure to make a GPU trainer fails the test.
bool gpu_available() {
  if (!test::vulkan_device_or_skip("the live GPU backend")) return false;
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.hidden = {4};
  cfg.batch = 4;
  auto data = run::load_data(cfg);
  gpu::make_trainer(cfg, data, core::init_parameters(run::model_shape(cfg, data), 1));
  return true;
}

// The CPU backend, and the GPU backend where a Vulkan device exists.
std::vector<std::pair<std::string, run::TrainerFactory>> live_backends() {
  std::vector<std::pair<std::string, run::TrainerFactory>> backends = {{"cpu", cpu::make_trainer}};
  // As the dashboard makes them (run::backends_from_config): one device cache, so rebuilds and resets reuse the
  // device, the kernels and the uploaded dataset.
  if (gpu_available()) {
    auto cache = std::make_shared<gpu::DeviceCache>();
    backends.push_back({"gpu", [cache](const core::TrainConfig& c, const core::DataSplit& d,
                                       const std::vector<float>& p) { return gpu::make_trainer(c, d, p, cache.get()); }});
  }
  return backends;
}

using test::eventually;

core::TrainConfig live_config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_points = 600;
  cfg.hidden = {32, 16};
  cfg.batch = 32;
  cfg.epochs = 1000;  // runs until stopped
  cfg.lr = 0.01f;
  cfg.readback_interval = 5;
  return cfg;
}

// One session of a single backend on the live configuration, as each test case sets it up: the data, the tracker of
// the trainer it made last, and the session (paused or started by the test).
struct LiveRun {
  std::shared_ptr<const core::DataSplit> data;
  Tracker tracker;
  run::Observer observer;
  run::Session session;
  LiveRun(const core::TrainConfig& cfg, const std::string& name, run::TrainerFactory make)
      : data(std::make_shared<const core::DataSplit>(run::load_data(cfg))),
        session(cfg, data, {tracked(name, std::move(make), tracker)}, observer, run::SessionOptions{true}) {}
};

}  // namespace

TEST_CASE("pause, single step, batch-size change keeping the weights, refused batch, lr change, reset") {
  for (const auto& [name, factory] : live_backends()) {
    CAPTURE(name);
    core::TrainConfig cfg = live_config();
    LiveRun live(cfg, name, factory);
    auto& data = live.data; auto& tracker = live.tracker; auto& session = live.session;
    // Paused before the first step, then moved on by single steps: every step of this test is at a known place, so
    // its losses are the same in every run (a free-running start paused wherever the poll caught it).
    session.post(run::Command(run::Command::Kind::Pause));
    session.start();
    auto run = [&] { return session.snapshot().at(0); };
    auto advance = [&](int steps) {
      for (int i = 0; i < steps; ++i) {
        const size_t before = run().step_losses.size();
        session.post(run::Command(run::Command::Kind::SingleStep));
        REQUIRE(eventually([&] {
          const auto r = run();
          return r.step_losses.size() == before + 1 && r.paused;
        }));
      }
    };

    REQUIRE(eventually([&] { return run().paused; }));
    CHECK(run().step_losses.empty());
    advance(20);
    const float first_loss = run().step_losses.front();
    const size_t paused_steps = run().step_losses.size();
    REQUIRE(paused_steps == 20);
    std::this_thread::sleep_for(50ms);
    CHECK(run().step_losses.size() == paused_steps);  // paused means no steps

    session.post(run::Command(run::Command::Kind::SingleStep));
    REQUIRE(eventually([&] { return run().step_losses.size() == paused_steps + 1; }));
    std::this_thread::sleep_for(50ms);
    CHECK(run().step_losses.size() == paused_steps + 1);  // exactly one
    REQUIRE(eventually([&] { return run().paused; }));

    // Batch 32 -> 64 while paused: the new trainer starts from exactly the weights of the old one.
    std::vector<float> before;
    core::Trainer* old_trainer = nullptr;
    {
      std::lock_guard lock(tracker.mutex);
      old_trainer = tracker.last;
      before = old_trainer->parameters();
    }
    run::Command batch(run::Command::Kind::SetBatch);
    batch.value = 64;
    session.post(batch);
    REQUIRE(eventually([&] { return run().config.batch == 64; }));
    REQUIRE(eventually([&] { return run().paused; }));
    {
      std::lock_guard lock(tracker.mutex);
      CHECK(tracker.last != old_trainer);
      CHECK(tracker.last->parameters() == before);
      CHECK(tracker.last->plan().batch == 64);
      CHECK(run().memory.activations == tracker.last->memory_usage().activations);  // the new trainer's figure
    }
    REQUIRE_FALSE(run().markers.empty());
    CHECK(run().markers.back().label == "batch 32 -> 64");
    CHECK(run().markers.back().step == static_cast<long>(paused_steps + 1));

    // A batch larger than the training set is refused; training goes on with batch 64.
    batch.value = data->train.count + 1;
    session.post(batch);
    REQUIRE(eventually([&] { return run().status.find("refused") != std::string::npos; }));
    CHECK(run().config.batch == 64);
    // A learning rate the command line refuses is refused here too (the same rule, core::rules::lr).
    run::Command lr(run::Command::Kind::SetLearningRate);
    lr.lr = std::numeric_limits<float>::quiet_NaN();
    session.post(lr);
    REQUIRE(eventually([&] { return run().status.find("learning rate refused: --lr nan") != std::string::npos; }));
    CHECK(run().config.lr == doctest::Approx(0.01f));

    lr.lr = 0.005f;
    session.post(lr);
    advance(300);
    auto r = run();
    CHECK(r.config.lr == doctest::Approx(0.005f));
    CHECK(r.markers.back().label == "lr 0.01 -> 0.005");
    // The loss curve continues where it was (trained weights): the last ten losses are well below the first ten.
    double head = 0, tail = 0;
    for (size_t i = 0; i < 10; ++i) head += r.step_losses[i] / 10.0;
    for (size_t i = r.step_losses.size() - 10; i < r.step_losses.size(); ++i) tail += r.step_losses[i] / 10.0;
    MESSAGE(name, ": mean loss of the first 10 steps ", head, ", of the last 10 ", tail);
    CHECK(tail < 0.95 * head);

    session.post(run::Command(run::Command::Kind::Resume));
    REQUIRE(eventually([&] { return run().step_losses.size() >= r.step_losses.size() + 10; }));
    r = run();
    CHECK(r.step_seconds.size() == r.step_losses.size());
    for (size_t i = 1; i < r.step_seconds.size(); ++i) CHECK(r.step_seconds[i] >= r.step_seconds[i - 1]);

    // Reset with the same settings: the history starts over from the same initial weights.
    session.request_reset(cfg);
    REQUIRE(eventually([&] {
      auto x = run();
      return x.config.batch == 32 && x.markers.empty() && !x.step_losses.empty();
    }));
    REQUIRE(eventually([&] { return !run().step_losses.empty(); }));
    CHECK(run().step_losses.front() == doctest::Approx(first_loss).epsilon(1e-6));
    session.request_stop();
    session.wait();
    CHECK(run().error.empty());
  }
}

TEST_CASE("a reset to a dataset that cannot be loaded is refused and training goes on") {
  core::TrainConfig cfg = live_config();
  LiveRun live(cfg, "cpu", cpu::make_trainer);
  auto& session = live.session;
  session.start();
  core::TrainConfig bad = cfg;
  bad.dataset = "fashion-mnist";
  bad.data_dir = "/nonexistent/trainscope-test";
  session.request_reset(bad);
  REQUIRE(eventually([&] { return session.status().find("reset refused") != std::string::npos; }));
  CHECK(session.status().find("/nonexistent/trainscope-test") != std::string::npos);
  const size_t steps = session.snapshot().at(0).step_losses.size();
  REQUIRE(eventually([&] { return session.snapshot().at(0).step_losses.size() > steps + 10; }));
  CHECK(session.config().dataset == "spiral");
}

TEST_CASE("reset requests in quick succession: none waits for the loader, the newest is applied last") {
  core::TrainConfig cfg = live_config();
  LiveRun live(cfg, "cpu", cpu::make_trainer);
  auto& session = live.session;
  session.start();
  core::TrainConfig first = cfg, second = cfg;
  first.hidden = {8};
  first.spiral_points = 300;  // other data: the loader has to make it
  second.hidden = {12, 6};
  session.request_reset(first);
  session.request_reset(second);
  REQUIRE(eventually([&] { return session.config().hidden == std::vector<int>{12, 6}; }));
  REQUIRE(eventually([&] {
    auto r = session.snapshot().at(0);
    return r.config.hidden == std::vector<int>{12, 6} && r.step_losses.size() > 5;
  }));
  CHECK(session.status().empty());
}

TEST_CASE("a reset to a smaller training set trains whole epochs of it (the epoch's size is the new data's)") {
  core::TrainConfig cfg = live_config();  // 3 x 600 training points
  LiveRun live(cfg, "cpu", cpu::make_trainer);
  auto& session = live.session;
  session.start();
  REQUIRE(eventually([&] { return session.snapshot().at(0).step_losses.size() >= 5; }));
  core::TrainConfig smaller = cfg;
  smaller.spiral_points = 100;  // 300 training points: 9 steps of 32 per epoch
  session.request_reset(smaller);
  REQUIRE(eventually([&] {
    const auto r = session.snapshot().at(0);
    return (r.generation == 2 && r.epochs.size() >= 2) || !r.error.empty();
  }));
  const auto r = session.snapshot().at(0);
  CHECK(r.error.empty());  // before the fix: "cpu trainer: step past the end of the epoch's order" at step 9
  CHECK(r.steps_per_epoch == 9);
}

TEST_CASE("live precision switch fp32 -> fp16 -> bf16 -> fp32: the masters carry over, markers and per-precision rows") {
  for (const auto& [name, factory] : live_backends()) {
    CAPTURE(name);
    core::TrainConfig cfg = live_config();
    LiveRun live(cfg, name, factory);
    auto& tracker = live.tracker; auto& session = live.session;
    session.start();
    auto run = [&] { return session.snapshot().at(0); };
    REQUIRE(eventually([&] { return run().step_losses.size() >= 10; }));
    const core::MemoryUsage fp32_memory = run().memory;
    CHECK(run().memory_fp32 == fp32_memory);
    const std::string previous[] = {"fp32", "fp16", "bf16"};
    int i = 0;
    for (core::Precision next : {core::Precision::FP16, core::Precision::BF16, core::Precision::FP32}) {
      CAPTURE(std::string(core::to_string(next)));
      session.post(run::Command(run::Command::Kind::Pause));
      REQUIRE(eventually([&] { return run().paused; }));
      std::vector<float> before;
      {
        std::lock_guard lock(tracker.mutex);
        before = tracker.last->parameters();
      }
      run::Command c(run::Command::Kind::SetPrecision);
      c.precision = next;
      session.post(c);
      REQUIRE(eventually([&] { return run().config.precision == next; }));
      {
        std::lock_guard lock(tracker.mutex);
        CHECK(tracker.last->parameters() == before);  // converted from the fp32 masters: nothing lost
        CHECK(tracker.last->plan().precision == next);
      }
      const auto r = run();
      REQUIRE_FALSE(r.markers.empty());
      CHECK(r.markers.back().label == previous[i] + " -> " + core::to_string(next));
      CHECK(r.status == r.markers.back().label);
      if (next != core::Precision::FP32) {
        CHECK(r.memory.master_weights == fp32_memory.weights);
        CHECK(2 * r.memory.weights == fp32_memory.weights);
        CHECK(r.memory_fp32.weights == fp32_memory.weights);
      }
      const size_t steps = r.step_losses.size();
      session.post(run::Command(run::Command::Kind::Resume));
      REQUIRE(eventually([&] { return run().step_losses.size() >= steps + 10; }));
      ++i;
    }
    const auto r = run();
    CHECK(r.memory == fp32_memory);
    // One speed row per precision (batch 32): the fp32 row from both fp32 stretches.
    REQUIRE(r.precisions.size() == 3);
    CHECK(r.precisions[0].precision == core::Precision::FP32);
    CHECK(r.precisions[1].precision == core::Precision::FP16);
    CHECK(r.precisions[2].precision == core::Precision::BF16);
    for (const auto& row : r.precisions) {
      CHECK(row.batch == 32);
      CHECK(row.steps >= 8);
      CHECK(row.mean_step_ms() > 0);
      CHECK(row.gbps() > 0);
    }
    session.request_stop();
    session.wait();
    CHECK(run().error.empty());
  }
}

TEST_CASE("a change sent to a finished backend is part of the settings, and Reset trains with them") {
  core::TrainConfig cfg = live_config();
  cfg.epochs = 1;  // an explicit number of epochs still stops the run
  LiveRun live(cfg, "cpu", cpu::make_trainer);
  auto& tracker = live.tracker; auto& session = live.session;
  session.start();
  auto run = [&] { return session.snapshot().at(0); };
  REQUIRE(eventually([&] { return run().finished; }));
  CHECK(run().status.find("Reset trains again") != std::string::npos);
  run::Command c(run::Command::Kind::SetPrecision);
  c.precision = core::Precision::BF16;
  session.post(c);
  run::Command b(run::Command::Kind::SetBatch);
  b.value = 64;
  session.post(b);
  CHECK(session.settings().precision == core::Precision::BF16);  // what the controls show
  CHECK(session.settings().batch == 64);
  std::this_thread::sleep_for(50ms);
  CHECK(run().config.precision == core::Precision::FP32);  // the finished run's record: what it trained with
  CHECK(run().config.batch == 32);
  session.request_reset();  // with the settings shown
  REQUIRE(eventually([&] {  // a new run record (which finishes its one epoch soon, too)
    const auto r = run();
    return r.config.precision == core::Precision::BF16 && !r.step_losses.empty();
  }));
  CHECK(run().config.batch == 64);
  {
    std::lock_guard lock(tracker.mutex);
    CHECK(tracker.last_plan.precision == core::Precision::BF16);  // the trainer itself, not only the record
    CHECK(tracker.last_plan.batch == 64);
  }
  session.request_stop();
  session.wait();
}

TEST_CASE("batch changes at the last steps of an epoch, many times: applied between steps, the epoch rolls over") {
  // 150 training samples; each single step follows a batch change, so changes land at every position of an
  // epoch, also where the new batch no longer fits in what is left of it. Before the fix the worker checked the old
  // batch size and then stepped with the new one ("step past the end of the epoch's order"). The expected epoch
  // count is simulated with the rule: a batch that does not fit in the rest of the epoch ends it (the rest is
  // dropped, as a last partial batch always is); after each step the epoch ends once the current batch no longer fits.
  const int sizes[] = {100, 32, 64, 150, 48, 96, 1, 149, 75, 32};
  for (const auto& [name, factory] : live_backends()) {
    CAPTURE(name);
    core::TrainConfig cfg = live_config();
    cfg.spiral_points = 50;  // 3 classes x 50 = 150 training samples
    cfg.hidden = {8};
    cfg.readback_interval = 1;
    LiveRun live(cfg, name, factory);
    auto& session = live.session;
    REQUIRE(live.data->train.count == 150);
    const size_t N = 150;
    session.start();
    auto run = [&] { return session.snapshot().at(0); };
    REQUIRE(eventually([&] { return run().step_losses.size() >= 3; }));
    session.post(run::Command(run::Command::Kind::Pause));
    REQUIRE(eventually([&] { return run().paused; }));
    core::BackendRun r = run();
    size_t pos = static_cast<size_t>(r.step_in_epoch) * 32;  // batch 32 so far
    size_t epochs = r.epochs.size();
    size_t batch = 32, steps = r.step_losses.size();
    const int rounds = 60;
    for (int i = 0; i < rounds; ++i) {
      const size_t next = static_cast<size_t>(sizes[i % std::size(sizes)]);
      CAPTURE(i);
      CAPTURE(pos);
      CAPTURE(next);
      run::Command change(run::Command::Kind::SetBatch);
      change.value = static_cast<int>(next);
      session.post(change);
      session.post(run::Command(run::Command::Kind::SingleStep));
      // The step is taken (exactly one), and the worker is waiting again, past any evaluation.
      REQUIRE(eventually([&] {
        const auto x = run();
        return (x.step_losses.size() == steps + 1 && x.paused) || !x.error.empty();
      }));
      r = run();
      REQUIRE(r.error.empty());
      REQUIRE(r.config.batch == static_cast<int>(next));
      if (next != batch && pos + next > N) ++epochs, pos = 0;  // the new batch does not fit: the epoch rolls over
      batch = next;
      pos += batch;
      if (pos + batch > N) ++epochs, pos = 0;  // the epoch is finished
      steps += 1;
      CHECK(r.epochs.size() == epochs);
      CHECK(r.step_losses.size() == steps);
    }
    session.request_stop();
    session.wait();
    CHECK(run().error.empty());
  }
}

TEST_CASE("live teaching toggles: in settings() at once, each backend rebuilds with them, marked, weights kept") {
  for (const auto& [name, factory] : live_backends()) {
    CAPTURE(name);
    core::TrainConfig cfg = live_config();
    LiveRun live(cfg, name, factory);
    auto& tracker = live.tracker; auto& session = live.session;
    session.start();
    auto run = [&] { return session.snapshot().at(0); };
    REQUIRE(eventually([&] { return run().step_losses.size() >= 5; }));
    using T = core::Execution::Toggle;
    for (auto [toggle, label] : {std::pair{T::Unfused, "unfused on"}, {T::SyncEveryStep, "sync every step on"},
                                 {T::SubmitPerKernel, "submit per kernel on"}}) {
      CAPTURE(std::string(label));
      session.post(run::Command(run::Command::Kind::Pause));
      REQUIRE(eventually([&] { return run().paused; }));
      std::vector<float> before;
      {
        std::lock_guard lock(tracker.mutex);
        before = tracker.last->parameters();
      }
      run::Command c(run::Command::Kind::SetToggle);
      c.toggle = toggle;
      c.on = true;
      session.post(c);
      CHECK(session.settings().execution[toggle]);  // the one truth, before any backend applied it
      REQUIRE(eventually([&] { return run().running.execution[toggle]; }));
      {
        std::lock_guard lock(tracker.mutex);
        CHECK(tracker.last->parameters() == before);
        CHECK(tracker.last->plan().unfused == session.settings().execution.unfused);
      }
      const auto r = run();
      REQUIRE_FALSE(r.markers.empty());
      CHECK(r.markers.back().label == label);
      CHECK(r.running.unfused == r.config.execution.unfused);
      const size_t steps = r.step_losses.size();
      session.post(run::Command(run::Command::Kind::Resume));
      REQUIRE(eventually([&] { return run().step_losses.size() >= steps + 5; }));
    }
    // The counts of the trainer in use, read back with its steps: per-kernel submissions on the GPU.
    const auto r = run();
    CHECK(r.counts.steps > 0);
    CHECK(r.running.attention_bytes_naive == 0);  // an MLP: no attention line in the Kernels tab
    if (name == "gpu") CHECK(r.counts.submits == r.counts.steps * static_cast<long>(tracker.last_plan.entries.size()));
    session.request_stop();
    session.wait();
    CHECK(run().error.empty());
  }
}

TEST_CASE("live input pipeline: device -> host loader -> device, each a rebuild with the weights kept, marked") {
  for (const auto& [name, factory] : live_backends()) {
    CAPTURE(name);
    core::TrainConfig cfg = live_config();
    LiveRun live(cfg, name, factory);
    auto& tracker = live.tracker; auto& session = live.session;
    session.start();
    auto run = [&] { return session.snapshot().at(0); };
    REQUIRE(eventually([&] { return run().step_losses.size() >= 5; }));
    const core::InputPipeline host{core::InputSource::Host, false, 2, 1, true};
    for (const core::InputPipeline& input : {host, core::InputPipeline{}}) {
      CAPTURE(core::to_string(input));
      session.post(run::Command(run::Command::Kind::Pause));
      REQUIRE(eventually([&] { return run().paused; }));
      std::vector<float> before;
      {
        std::lock_guard lock(tracker.mutex);
        before = tracker.last->parameters();
      }
      run::Command c(run::Command::Kind::SetInput);
      c.input = input;
      session.post(c);
      CHECK(session.settings().input == input);  // the one truth, before any backend applied it
      REQUIRE(eventually([&] { return run().config.input == input && !run().building; }));
      {
        std::lock_guard lock(tracker.mutex);
        CHECK(tracker.last->parameters() == before);
        CHECK(tracker.last->plan().entries.front().transfer() == input.host());
      }
      const auto r = run();
      REQUIRE_FALSE(r.markers.empty());
      CHECK(r.markers.back().label == "input " + core::to_string(input));
      const size_t steps = r.step_losses.size();
      session.post(run::Command(run::Command::Kind::Resume));
      REQUIRE(eventually([&] { return run().step_losses.size() >= steps + 5; }));
      CHECK(run().error.empty());
    }
    // Augmentation needs images: refused on the spiral, the setting falls back to what runs, the training goes on.
    run::Command augment(run::Command::Kind::SetInput);
    augment.input = host;
    augment.input.augment = true;
    session.post(augment);
    REQUIRE(eventually([&] { return run().status.find("--augment") != std::string::npos; }));
    CHECK(eventually([&] { return session.settings().input == core::InputPipeline{}; }));
    const size_t steps = run().step_losses.size();
    REQUIRE(eventually([&] { return run().step_losses.size() >= steps + 5; }));
    session.request_stop();
    session.wait();
    CHECK(run().error.empty());
  }
}

TEST_CASE("a live change the transformer cannot run (--unfused, --input host) is refused and training goes on") {
  core::TrainConfig cfg = live_config();
  cfg.dataset = "reverse";
  cfg.model = core::ModelKind::Transformer;
  cfg.context = 6;
  cfg.reverse_samples = 512;
  cfg.embed = 16;
  cfg.heads = 2;
  cfg.layers = 1;
  cfg.activation = core::Activation::GELU;
  LiveRun live(cfg, "cpu", cpu::make_trainer);
  auto& session = live.session;
  session.start();
  auto run = [&] { return session.snapshot().at(0); };
  REQUIRE(eventually([&] { return run().step_losses.size() >= 3; }));
  {  // the attention's traffic published for the Kernels tab's line: the trainer's plan's, naive above fused
    const auto r = run();
    std::lock_guard lock(live.tracker.mutex);
    const core::AttentionTraffic t = core::attention_traffic(live.tracker.last->plan());
    CHECK(t.fused > 0);
    CHECK(t.naive > t.fused);
    CHECK(r.running.attention_bytes_fused == t.fused);
    CHECK(r.running.attention_bytes_naive == t.naive);
  }
  run::Command c(run::Command::Kind::SetToggle);
  c.toggle = core::Execution::Toggle::Unfused;
  c.on = true;
  session.post(c);
  REQUIRE(eventually([&] { return run().status.find("refused") != std::string::npos; }));
  CHECK(run().status.find("--unfused: the transformer") != std::string::npos);
  CHECK_FALSE(run().running.unfused);  // what runs is what the controls show: the fused plan
  CHECK_FALSE(session.settings().execution.unfused);
  CHECK_FALSE(run().config.execution.unfused);
  const size_t steps = run().step_losses.size();
  REQUIRE(eventually([&] { return run().step_losses.size() >= steps + 3; }));  // and it goes on
  session.request_stop();
  session.wait();
  CHECK(run().error.empty());
}
