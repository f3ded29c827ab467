// run::SessionPeaks, the dashboard's peaks, on a running session with the real CPU trainer: the cache is read and
// nothing measured at construction; a measurement pauses training first (no step runs while the probes do), caches
// what it measured and resumes; a session the user had paused stays paused; a failed measurement says why. The probes
// are replaced by a fake that checks the session's state (the real ones are test_app_peaks' business).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "cpu/trainer.hpp"
#include "eventually.hpp"
#include "run/data.hpp"
#include "run/peaks.hpp"
#include "run/session.hpp"
#include "run/session_peaks.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::eventually;

core::TrainConfig live_config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_points = 600;
  cfg.hidden = {16};
  cfg.batch = 32;
  cfg.epochs = 1000;  // runs until stopped
  cfg.backends = {"cpu"};
  cfg.readback_interval = 5;
  return cfg;
}

fs::path fresh_cache(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("trainscope_test_run_peaks_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "peaks.json";
}

core::DevicePeaks synthetic_cpu_peaks(double triad_gbps) {
  core::DevicePeaks p;
  p.backend = "cpu";
  p.key = run::peaks_key("cpu", -1);
  p.device = "test CPU";
  p.threads = 2;
  p.cpu_kernel_simd = "avx2";
  core::PeakFigure f;
  f.id = "stream_triad_nt";
  f.label = "memory bandwidth: STREAM triad, all threads";
  f.unit = "GB/s";
  f.value = triad_gbps;
  f.samples = std::vector<double>(5, triad_gbps);
  f.method = "synthetic";
  p.figures.push_back(f);
  return p;
}

// A session training the CPU backend until stopped, and its step count.
struct Live {
  core::TrainConfig cfg = live_config();
  std::shared_ptr<const core::DataSplit> data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  run::Observer observer;
  run::Session session{cfg, data, {{"cpu", cpu::make_trainer}}, observer, run::SessionOptions{true}};
  size_t steps() const { return session.snapshot().at(0).step_losses.size(); }
};

}  // namespace

TEST_CASE("SessionPeaks: reads the cache, measures only with training paused, then resumes it") {
  const fs::path cache = fresh_cache("measure");
  Live live;
  live.session.start();
  REQUIRE(eventually([&] { return live.steps() > 3; }));

  int calls = 0;
  bool all_paused = true, steps_while_measuring = false;
  run::SessionPeaks peaks(live.session, {"cpu"}, -1, cache,
                          [&](const std::string& backend, const core::PeakProgress& progress) {
                            ++calls;
                            CHECK(backend == "cpu");
                            for (const auto& r : live.session.snapshot()) all_paused = all_paused && r.paused;
                            const size_t before = live.steps();
                            progress("cpu: STREAM copy");
                            std::this_thread::sleep_for(150ms);  // a probe's time: no step may run meanwhile
                            steps_while_measuring = live.steps() != before;
                            run::PeaksLookup found;
                            found.peaks = synthetic_cpu_peaks(17.5);
                            core::save_peaks(cache, found.peaks);
                            return found;
                          });
  // Constructed from an empty cache: nothing measured yet, nothing paused.
  CHECK(peaks.missing());
  REQUIRE(peaks.state().backends.size() == 1);
  CHECK(peaks.state().backends[0].source == "not measured");
  CHECK_FALSE(peaks.state().backends[0].peaks);
  CHECK(calls == 0);
  CHECK_FALSE(live.session.pause_requested());

  peaks.measure(true);
  REQUIRE(eventually([&] { return !peaks.state().measuring; }));
  CHECK(calls == 1);
  CHECK(all_paused);
  CHECK_FALSE(steps_while_measuring);
  const run::SessionPeaks::State s = peaks.state();
  REQUIRE(s.backends[0].peaks);
  CHECK(s.backends[0].source == "measured");
  CHECK(s.backends[0].peaks->value("stream_triad_nt") == 17.5);
  CHECK(s.message.find("measured") != std::string::npos);
  CHECK_FALSE(peaks.missing());
  // Training goes on afterwards.
  CHECK_FALSE(live.session.pause_requested());
  const size_t after = live.steps();
  CHECK(eventually([&] { return live.steps() > after + 3; }));

  // A second SessionPeaks finds the figures in the cache without measuring.
  run::SessionPeaks again(live.session, {"cpu"}, -1, cache, [&](const std::string&, const core::PeakProgress&) {
    FAIL("measured although cached");
    return run::PeaksLookup{};
  });
  CHECK_FALSE(again.missing());
  CHECK(again.state().backends[0].source == "cached");
  CHECK(again.state().backends[0].peaks->value("stream_triad_nt") == 17.5);
  live.session.request_stop();
  live.session.wait();
}

TEST_CASE("SessionPeaks: a session the user paused stays paused; a failed measurement keeps the old figures") {
  const fs::path cache = fresh_cache("paused");
  core::save_peaks(cache, synthetic_cpu_peaks(9.0));
  Live live;
  live.session.post(run::Command(run::Command::Kind::Pause));
  live.session.start();
  REQUIRE(eventually([&] { return live.session.snapshot().at(0).paused; }));

  run::SessionPeaks peaks(live.session, {"cpu"}, -1, cache, [&](const std::string&, const core::PeakProgress&) {
    throw core::Error(core::ErrorKind::Io, "probe failed on purpose");
    return run::PeaksLookup{};
  });
  REQUIRE(peaks.state().backends[0].peaks);
  peaks.measure(false);  // re-measure what is cached
  REQUIRE(eventually([&] { return !peaks.state().measuring; }));
  const run::SessionPeaks::State s = peaks.state();
  CHECK(s.message.find("probe failed on purpose") != std::string::npos);
  REQUIRE(s.backends[0].peaks);  // the cached figures stay
  CHECK(s.backends[0].peaks->value("stream_triad_nt") == 9.0);
  CHECK(live.session.pause_requested());  // the user's pause is kept
  const size_t before = live.steps();
  std::this_thread::sleep_for(100ms);
  CHECK(live.steps() == before);
  live.session.request_stop();
  live.session.wait();
}
