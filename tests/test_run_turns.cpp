// The fair mode's turns (run/turns.hpp): a backend never waits for the other's build (a start, a change of batch size
// or precision: compilation), a long step does not stretch the other's wait, and figures trained beside other work
// are left out of samples/s. Fake trainers with sleeps stand in for a slow device; nothing here asserts a speed.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/speedup.hpp"
#include "run/session.hpp"
#include "run/turns.hpp"
#include "run/worker.hpp"

namespace {

using namespace std::chrono_literals;

// A trainer whose steps take `step_ms` of wall time (as a device's would).
class SleepyTrainer : public core::Trainer {
 public:
  SleepyTrainer(const core::TrainConfig& cfg, const core::DataSplit& data, int step_ms)
      : plan_(core::build_step_plan(core::ModelShape({data.train.features, cfg.hidden[0], data.train.classes}),
                                    cfg.batch, cfg.activation, cfg.optimizer)),
        step_ms_(step_ms) {}
  const char* backend() const override { return "fake"; }
  std::string device_name() const override { return "Fake device"; }
  const core::StepPlan& plan() const override { return plan_; }
  void begin_epoch(std::span<const uint32_t>) override {}
  void step(size_t) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms_));
    core::StepRecord r;
    r.step = next_step_++;
    r.loss = 1.0f;
    r.kernel_ms.assign(plan_.entries.size(), 0.01);
    r.step_ms = step_ms_;
    queued_.push_back(r);
  }
  std::vector<core::StepRecord> flush() override { return std::exchange(queued_, {}); }
  core::EvalResult evaluate() override { return {0.5, 0.5}; }
  std::vector<float> parameters() override { return {}; }
  core::TrainerState export_state() override { return {}; }
  void import_state(const core::TrainerState&) override {}
  void set_learning_rate(float lr) override { lr_ = lr; }
  float learning_rate() const override { return lr_; }
  core::MemoryUsage memory_usage() const override { return {}; }
  core::MemoryUsage memory_usage_fp32() const override { return {}; }
  std::string unsupported_reason(core::Precision) const override { return {}; }

 private:
  core::StepPlan plan_;
  int step_ms_;
  long next_step_ = 0;
  float lr_ = 0;
  std::vector<core::StepRecord> queued_;
};

// A backend whose trainers for batch `slow_batch` take `build_ms` to build (a compile), steps of `step_ms`.
run::BackendSpec sleepy_spec(const std::string& name, int step_ms, int slow_batch = 0, int build_ms = 0) {
  return {name, [=](const core::TrainConfig& cfg, const core::DataSplit& data,
                    const std::vector<float>&) -> std::unique_ptr<core::Trainer> {
            if (cfg.batch == slow_batch) std::this_thread::sleep_for(std::chrono::milliseconds(build_ms));
            return std::make_unique<SleepyTrainer>(cfg, data, step_ms);
          }};
}

core::DataSplit small_data() {
  core::DataSplit d;
  for (core::Dataset* s : {&d.train, &d.test}) {
    s->name = "tiny";
    s->count = 400;
    s->features = 2;
    s->classes = 2;
    s->x.assign(static_cast<size_t>(s->count) * 2, 0.5f);
    s->y.assign(static_cast<size_t>(s->count), 1);
  }
  return d;
}

// The tiny model the sessions below train until stopped: one hidden layer of 4, batch 10.
core::TrainConfig tiny_config() {
  core::TrainConfig cfg;
  cfg.hidden = {4};
  cfg.batch = 10;
  cfg.epochs = core::kUntilStopped;
  return cfg;
}

// A started session of `specs` on small_data(), kept alive when its backends finish, taking turns where `fair`.
struct SleepySession {
  run::Observer observer;
  run::Session session;
  SleepySession(const core::TrainConfig& cfg, std::vector<run::BackendSpec> specs, bool fair)
      : session(cfg, std::make_shared<const core::DataSplit>(small_data()), std::move(specs), observer,
                options(fair)) {
    session.start();
  }
  static run::SessionOptions options(bool fair) {
    run::SessionOptions o;
    o.keep_alive = true;
    o.fair = fair;
    return o;
  }
};

template <typename Pred>
bool wait_for(Pred pred, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE("turns: a holder's long step does not stretch the other's wait; both count as shared meanwhile") {
  run::Turns turns(2, 0.05, true, 0.1);
  std::atomic<bool> stop{false};
  long mark0 = 0, mark1 = 0;
  CHECK(turns.take(0, stop) == run::Turns::Took::Free);
  CHECK_FALSE(turns.shared_since(0, mark0));
  // Worker 0 holds the turn in a step that does not end: worker 1 takes it after 0.05 + 0.1 s, not at 0's end.
  std::atomic<int> took{-1};
  std::thread other([&] { took = static_cast<int>(turns.take(1, stop)); });
  const bool returned = wait_for([&] { return took >= 0; }, 5000ms);
  if (!returned) stop = true, turns.wake_all();  // before: it waited for ever
  other.join();
  REQUIRE(returned);
  CHECK(took == static_cast<int>(run::Turns::Took::Overran));
  CHECK(turns.shared_since(0, mark0));  // 0's step ran beside 1's training
  CHECK(turns.shared_since(1, mark1));
  CHECK(turns.shared_since(1, mark1));  // still: 0 has not come back from its step
  // Worker 0's step ends: it is back in turns (and waits for 1's slice); 1's next read-back is shared once more.
  turns.pass_if_over(0);
  CHECK(turns.shared_since(1, mark1));
  CHECK_FALSE(turns.shared_since(1, mark1));
  turns.leave(1);
}

// Worker 0 holds the turn through one step of `step` while worker 1 (on a thread) waits to take it; then 0 reads back
// (shared_since, into `shared`) and passes the turn when its slice is over. Returns how worker 1 took the turn.
run::Turns::Took step_while_other_waits(run::Turns& turns, std::chrono::milliseconds step, long& mark0, bool& shared) {
  std::atomic<bool> stop{false};
  std::atomic<int> took{-1};
  std::thread other([&] { took = static_cast<int>(turns.take(1, stop)); });
  std::this_thread::sleep_for(step);
  shared = turns.shared_since(0, mark0);
  turns.pass_if_over(0);
  const bool returned = wait_for([&] { return took >= 0; }, 5000ms);
  if (!returned) stop = true, turns.wake_all();
  other.join();
  REQUIRE(returned);
  return static_cast<run::Turns::Took>(took.load());
}

// Worker 1, which holds the turn: one short step, its read-back, and the turn back to worker 0 (its slice is over).
void short_step_of_1(run::Turns& turns, long& mark1, bool& shared) {
  std::atomic<bool> stop{false};
  CHECK(turns.take(1, stop) == run::Turns::Took::Free);
  std::this_thread::sleep_for(60ms);
  shared = turns.shared_since(1, mark1);
  turns.pass_if_over(1);
}

TEST_CASE("turns: the wait follows the holder's steps, so a step longer than the shortest wait is timed alone") {
  // Steps of 0.3 s against a slice of 0.05 s and a shortest wait of 0.1 s (as the dashboard's steps of over 2 s
  // against 0.5 s and 1.5 s). Before: every step of the holder was overrun, and neither worker was timed alone.
  run::Turns turns(2, 0.05, true, 0.1);
  std::atomic<bool> stop{false};
  long mark0 = 0, mark1 = 0;
  int overruns = 0;
  bool shared0 = true, shared1 = true;
  for (int step = 0; step < 3; ++step) {
    CHECK(turns.take(0, stop) == run::Turns::Took::Free);  // free, or passed back by worker 1
    overruns += step_while_other_waits(turns, 300ms, mark0, shared0) == run::Turns::Took::Overran;
    // 0's first step was overrun (its time not known yet), and the read-back after it counts as shared too.
    CHECK(shared0 == (step < 2));
    short_step_of_1(turns, mark1, shared1);
  }
  CHECK(overruns == 1);  // only the first step
  CHECK_FALSE(shared1);  // 1's last slice was trained alone as well
  CHECK(turns.wait_limit_s(0) >= 0.3 * run::Turns::kStepMargin - 0.01);
  CHECK(turns.wait_limit_s(1) < turns.wait_limit_s(0));  // each worker's own steps
  CHECK(turns.step_beyond_cap_s() == 0);
}

TEST_CASE("turns: a step longer than the longest wait is overrun, and step_beyond_cap_s says so") {
  run::Turns turns(2, 0.05, true, 0.1, 0.2);  // waits at most 0.2 s past the slice
  std::atomic<bool> stop{false};
  long mark0 = 0, mark1 = 0;
  bool shared0 = false, shared1 = false;
  for (int step = 0; step < 2; ++step) {
    CHECK(turns.take(0, stop) == run::Turns::Took::Free);
    CHECK(step_while_other_waits(turns, 400ms, mark0, shared0) == run::Turns::Took::Overran);  // > 0.05 + 0.2 s
    CHECK(shared0);
    CHECK(turns.wait_limit_s(0) == doctest::Approx(0.2));
    CHECK(turns.step_beyond_cap_s() >= 0.39);
    short_step_of_1(turns, mark1, shared1);
    CHECK(shared1);
  }
  turns.set_enabled(false);
  CHECK(turns.step_beyond_cap_s() == 0);  // no turns: nothing to outlast
}

TEST_CASE("turns: a waiting worker is woken by a command; a build steps aside and is shared with the other") {
  run::Turns turns(2, 10.0, true, 10.0);
  std::atomic<bool> stop{false}, command{false};
  long mark1 = 0;
  CHECK(turns.take(0, stop) == run::Turns::Took::Free);
  std::atomic<int> took{-1};
  std::thread other([&] { took = static_cast<int>(turns.take(1, stop, &command)); });
  std::this_thread::sleep_for(50ms);
  CHECK(took == -1);  // 0's slice of 10 s
  command = true;
  turns.wake_all();
  CHECK(wait_for([&] { return took >= 0; }, 5000ms));
  other.join();
  CHECK(took == static_cast<int>(run::Turns::Took::Interrupted));
  command = false;
  // Worker 0 builds (aside): 1 takes the turn at once, and trains shared until 0's build ends.
  turns.begin_aside(0);
  CHECK(turns.take(1, stop) == run::Turns::Took::Free);  // handed over by begin_aside: 1 wanted it
  CHECK(turns.shared_since(1, mark1));
  CHECK(turns.shared_since(1, mark1));
  turns.end_aside(0);
  CHECK(turns.shared_since(1, mark1));  // the read-back across the end of the build
  CHECK_FALSE(turns.shared_since(1, mark1));
  turns.set_enabled(false);
  CHECK_FALSE(turns.shared_since(1, mark1));  // turns off: both always train at once, nothing is "alone"
}

TEST_CASE("fair mode: the CPU keeps training while the GPU rebuilds (a slow compile), its rate left out meanwhile") {
  // The GPU's trainer for batch 20 takes 4.5 s to build. Before: the GPU rebuilt holding the turn and the CPU waited the
  // whole build with its steps frozen (the "figures 76 s old" on both sides, 34 s for fp16's kernels).
  core::TrainConfig cfg = tiny_config();
  cfg.readback_interval = 4;
  SleepySession sleepy(cfg, {sleepy_spec("gpu", 5, 20, 4500), sleepy_spec("cpu", 5)}, true);
  run::Session& session = sleepy.session;
  auto run = [&](size_t i) { return session.snapshot().at(i); };
  REQUIRE(wait_for([&] { return run(0).step_losses.size() >= 20 && run(1).step_losses.size() >= 20; }, 20000ms));
  run::Command batch;
  batch.kind = run::Command::Kind::SetBatch;
  batch.value = 20;
  session.post(batch);
  REQUIRE(wait_for([&] { return run(0).building; }, 10000ms));
  // The CPU applies the change and trains on at batch 20 while the GPU builds.
  REQUIRE(wait_for([&] { return run(1).config.batch == 20 || !run(0).building; }, 10000ms));
  const size_t cpu_before = run(1).step_losses.size();
  std::this_thread::sleep_for(2000ms);
  const core::BackendRun gpu = run(0), cpu = run(1);
  REQUIRE(gpu.building);  // still within the GPU's 4.5 s build
  CHECK(cpu.config.batch == 20);
  CHECK(cpu.step_losses.size() >= cpu_before + 40);  // 2 s of 5 ms steps: about 300 when it trains at all
  // Its steps beside the GPU's build (2 s, more than run::kSteadySeconds) were not timed alone: no samples/s at the
  // new batch size yet, and no speedup.
  CHECK(cpu.recent_samples_per_s == 0);
  CHECK_FALSE(core::live_speedup(gpu, cpu).ok());
  // Once the GPU has built, both are timed alone again and the speedup returns, for matched settings.
  REQUIRE(wait_for([&] { return core::live_speedup(run(0), run(1)).ok(); }, 20000ms));
  CHECK(run(0).config.batch == 20);
  CHECK(run(1).config.batch == 20);
  CHECK(run(1).recent_samples_per_s > 0);
  session.request_stop();
  session.wait();
}

TEST_CASE("fair mode: the CPU trains while the GPU's first trainer is built (its compile at the start)") {
  SleepySession sleepy(tiny_config(), {sleepy_spec("gpu", 5, 10, 4500), sleepy_spec("cpu", 5)}, true);
  run::Session& session = sleepy.session;
  auto run = [&](size_t i) { return session.snapshot().at(i); };
  // The CPU trains 2 s (more than run::kSteadySeconds) within the GPU's 4.5 s start.
  REQUIRE(wait_for([&] { return run(0).building || !run(0).step_losses.empty(); }, 10000ms));
  REQUIRE(wait_for([&] { return run(1).elapsed_s >= 2 || !run(0).building; }, 10000ms));
  const core::BackendRun gpu = run(0), cpu = run(1);
  REQUIRE(gpu.building);
  CHECK(cpu.step_losses.size() >= 40);
  CHECK(cpu.recent_samples_per_s == 0);  // beside the GPU's build: not timed alone
  session.request_stop();
  session.wait();
}

TEST_CASE("fair mode: a backend whose steps outlast the shortest wait gets a samples/s figure, and so does the other") {
  // Two workers on turns of 0.2 s slices and a shortest wait of 0.05 s; the "gpu" steps 0.3 s (as a device of 2.5 s
  // steps against the dashboard's 0.5 s and 1.5 s). Before: each of its steps was overrun, its read-backs all shared,
  // and neither backend ever had a figure (the header's "measuring samples/s" for ever).
  run::Turns turns(2, 0.2, true, 0.05);
  std::atomic<bool> stop{false};
  run::Observer observer;
  auto data = std::make_shared<const core::DataSplit>(small_data());
  auto init = std::make_shared<const std::vector<float>>();  // the fake trainers have no weights
  run::Worker slow(sleepy_spec("gpu", 300), tiny_config(), data, init, observer, stop, true);
  run::Worker fast(sleepy_spec("cpu", 5), tiny_config(), data, init, observer, stop, true);
  slow.set_turns(&turns, 0);
  fast.set_turns(&turns, 1);
  std::thread slow_thread([&] { slow.run(); }), fast_thread([&] { fast.run(); });
  // A figure needs run::kSteadySeconds of steps timed alone: 4 of the slow steps after the first two, 5 slices of the
  // fast one.
  const bool rates = wait_for(
      [&] { return slow.snapshot().recent_samples_per_s > 0 && fast.snapshot().recent_samples_per_s > 0; }, 10000ms);
  const core::BackendRun slow_run = slow.snapshot();
  stop = true;
  turns.wake_all();
  slow.wake();
  fast.wake();
  slow_thread.join();
  fast_thread.join();
  CHECK(rates);
  CHECK(slow_run.rate_note.empty());
  CHECK(slow_run.recent_samples_per_s < 10 / 0.3 * 1.01);  // batch 10 every 0.3 s at most: its own steps' rate
}

TEST_CASE("samples/s is shown only once a second of steps at the settings in force was timed") {
  // Before: a rate from the second read-back on (about 0.25 s of steps), which jumped from read-back to read-back.
  SleepySession sleepy(tiny_config(), {sleepy_spec("cpu", 5)}, false);
  run::Session& session = sleepy.session;
  bool early_seen = false, early_rate = false;
  const bool rate = wait_for(
      [&] {
        const core::BackendRun r = session.snapshot().at(0);
        if (!r.step_losses.empty() && r.elapsed_s < run::kSteadySeconds) {
          early_seen = true;
          early_rate = early_rate || r.recent_samples_per_s > 0;
        }
        return r.recent_samples_per_s > 0;
      },
      20000ms);
  CHECK(early_seen);  // read-backs before a second of training were looked at
  CHECK_FALSE(early_rate);
  CHECK(rate);
  CHECK(session.snapshot().at(0).elapsed_s >= run::kSteadySeconds);
  session.request_stop();
  session.wait();
}
