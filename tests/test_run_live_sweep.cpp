// The sweep beside a live training (run::LiveSweep, the dashboard's Sweep tab) with the real CPU trainer on a small
// spiral: training is paused while the points are measured and resumed after (or left paused when it was paused
// before), its losses are those of an undisturbed run of the same settings, a stop ends the sweep early, and a
// training that does not pause delays the sweep only up to the timeout, which the status then names.
// Waits are for a state, bounded at 60 s (test::eventually).
#include <doctest/doctest.h>

#include <atomic>

#include <chrono>
#include <memory>
#include <thread>

#include "cpu/trainer.hpp"
#include "eventually.hpp"
#include "run/data.hpp"
#include "run/live_sweep.hpp"
#include "run/session.hpp"

namespace {

using namespace std::chrono_literals;
using test::eventually;

core::TrainConfig config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_points = 300;
  cfg.hidden = {16};
  cfg.batch = 16;
  cfg.epochs = 1000;  // runs until stopped
  cfg.lr = 0.01f;
  cfg.threads = 1;    // one pool thread: the same sums in the same order in both sessions
  cfg.readback_interval = 2;
  cfg.backends = {"cpu"};
  return cfg;
}

run::SweepOptions sweep_options(std::vector<int> batches) {
  run::SweepOptions o;
  o.config = config();
  o.batches = std::move(batches);
  o.warmup_steps = 1;
  o.timed_steps = 2;
  return o;
}

run::LiveSweepHooks hooks_for(run::Session& session, bool was_paused) {
  run::LiveSweepHooks h;
  h.post = [&session](const run::Command& c) { session.post(c); };
  h.training_paused = [&session] {
    for (const auto& r : session.snapshot())
      if (!r.paused) return false;
    return true;
  };
  h.training_was_paused = was_paused;
  return h;
}

std::vector<run::BackendSpec> cpu_only() { return {{"cpu", cpu::make_trainer}}; }

}  // namespace

TEST_CASE("a sweep pauses the running training, measures, then resumes it, and the training's losses are untouched") {
  const core::TrainConfig cfg = config();
  auto data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  run::Observer observer;
  run::Session session(cfg, data, cpu_only(), observer, run::SessionOptions{true});
  session.start();
  auto steps = [&] { return session.snapshot().at(0).step_losses.size(); };
  REQUIRE(eventually([&] { return steps() >= 5; }));

  run::LiveSweep sweep;
  REQUIRE(sweep.start(sweep_options({1, 8, 64}), [&] { return *data; }, cpu_only(), hooks_for(session, false)));
  CHECK_FALSE(sweep.start(sweep_options({1}), [&] { return *data; }, cpu_only(), hooks_for(session, false)));
  CHECK(sweep.running());
  // Measuring starts only once the training has paused; from then on the training takes no step until the end.
  REQUIRE(eventually([&] { return !sweep.state().result.points.empty(); }));
  CHECK(session.snapshot().at(0).paused);
  const size_t during = steps();
  REQUIRE(eventually([&] { return sweep.state().status == "done"; }));
  CHECK(steps() == during);
  CHECK(session.snapshot().at(0).paused);
  REQUIRE(eventually([&] { return sweep.poll(); }));  // the owner's poll: the sweep ended, training resumes
  CHECK_FALSE(sweep.running());
  const run::LiveSweepState s = sweep.state();
  REQUIRE(s.result.points.size() == 3);
  for (const auto& p : s.result.points) CHECK(p.measured());
  CHECK(s.total == 3);
  REQUIRE(eventually([&] { return steps() >= during + 20; }));
  CHECK_FALSE(session.snapshot().at(0).paused);
  session.request_stop();
  session.wait();

  // The same settings without a sweep: every loss the paused-and-resumed training recorded is the same.
  run::Session reference(cfg, data, cpu_only(), observer, run::SessionOptions{true});
  const std::vector<float> swept = session.snapshot().at(0).step_losses;
  reference.start();
  REQUIRE(eventually([&] { return reference.snapshot().at(0).step_losses.size() >= swept.size(); }));
  reference.request_stop();
  reference.wait();
  const std::vector<float> undisturbed = reference.snapshot().at(0).step_losses;
  REQUIRE(undisturbed.size() >= swept.size());
  size_t differ = 0;
  for (size_t i = 0; i < swept.size(); ++i) differ += swept[i] != undisturbed[i];
  CHECK(differ == 0);
  CHECK(session.snapshot().at(0).error.empty());
}

TEST_CASE("a stopped sweep ends early; a training paused before stays paused") {
  const core::TrainConfig cfg = config();
  auto data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  run::Observer observer;
  run::Session session(cfg, data, cpu_only(), observer, run::SessionOptions{true});
  session.post(run::Command(run::Command::Kind::Pause));
  session.start();
  REQUIRE(eventually([&] { return session.snapshot().at(0).paused; }));

  run::LiveSweep sweep;
  const std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  // The sweep waits for training to pause before its first point: here until stop() has been called, so that a
  // loaded machine cannot let the sweep thread measure all nine tiny points before this thread gets to stop() (it
  // did: "9 < 9" once in a full run at load 8).
  std::atomic<bool> stop_sent{false};
  run::LiveSweepHooks hooks = hooks_for(session, true);
  hooks.training_paused = [&stop_sent, paused = hooks.training_paused] { return stop_sent.load() && paused(); };
  REQUIRE(sweep.start(sweep_options(batches), [&] { return *data; }, cpu_only(), hooks));
  sweep.stop();
  stop_sent = true;
  REQUIRE(eventually([&] { return sweep.poll(); }));
  const run::LiveSweepState s = sweep.state();
  CHECK(s.result.stopped);
  CHECK(s.status == "stopped");
  CHECK(s.result.points.size() < batches.size());
  std::this_thread::sleep_for(50ms);
  CHECK(session.snapshot().at(0).paused);  // no Resume: it was paused before the sweep
  CHECK(session.snapshot().at(0).step_losses.empty());
  session.request_stop();
  session.wait();
}

TEST_CASE("a training that does not pause delays the sweep only up to the timeout, and the status says so") {
  const core::TrainConfig cfg = config();
  const core::DataSplit data = run::load_data(cfg);
  int posted = 0;
  run::LiveSweepHooks h;
  h.post = [&](const run::Command&) { ++posted; };
  h.training_paused = [] { return false; };
  h.pause_timeout_s = 0.2;
  run::LiveSweep sweep;
  REQUIRE(sweep.start(sweep_options({4}), [&] { return data; }, cpu_only(), h));
  REQUIRE(eventually([&] { return sweep.poll(); }));
  CHECK(posted == 2);  // Pause at the start, Resume at the end
  const run::LiveSweepState s = sweep.state();
  CHECK(s.status.find("done") == 0);
  CHECK(s.status.find("did not pause in time") != std::string::npos);
  CHECK(s.result.points.size() == 1);
}
