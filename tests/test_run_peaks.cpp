// run::SessionPeaks, the dashboard's peaks, on a running session with the real CPU trainer: the cache is read and
// nothing measured at construction; a measurement pauses training first (no step runs while the probes do), caches
// what it measured and resumes; a session the user had paused stays paused; a failed measurement says why. The probes
// are replaced by a fake that checks the session's state (the real ones are test_app_peaks' business).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "cpu/peak_probe.hpp"
#include "cpu/simd.hpp"
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
  cfg.epochs = core::kUntilStopped;  // 1000 epochs of this model took 3 s: a test could outlive them
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

TEST_CASE("SessionPeaks between turns: training first and between the figures, each figure with training paused") {
  const fs::path cache = fresh_cache("between_turns");
  Live live;
  live.session.start();
  int figures = 0;
  bool all_paused = true, steps_while_measuring = false, steps_between = true;
  size_t after_figure = 0;
  run::SessionPeaks peaks(live.session, {"cpu"}, -1, cache,
                          [&](const std::string&, const core::PeakProgress& progress) {
                            for (const char* what : {"cpu: STREAM copy", "cpu: STREAM triad", "cpu: FMA peak"}) {
                              progress(what);
                              ++figures;
                              for (const auto& r : live.session.snapshot()) all_paused = all_paused && r.paused;
                              const size_t before = live.steps();
                              // Training ran since the figure before (a turn of 0.5 s: many steps of this model).
                              if (figures > 1 && before <= after_figure) steps_between = false;
                              std::this_thread::sleep_for(100ms);  // a probe's time: no step may run meanwhile
                              steps_while_measuring = steps_while_measuring || live.steps() != before;
                              after_figure = live.steps();
                            }
                            run::PeaksLookup found;
                            found.peaks = synthetic_cpu_peaks(17.5);
                            return found;
                          });
  REQUIRE(eventually([&] { return live.steps() > 3; }));  // the trainer runs (under load it can take seconds)
  const size_t at_start = live.steps();
  peaks.measure(true, run::BetweenTurns{1.0, 0.5});
  // Training first: steps run while the measurement waits, and the dashboard is told so.
  CHECK(peaks.state().measuring);
  CHECK(eventually([&] { return live.steps() > at_start; }));
  REQUIRE(eventually([&] { return !peaks.state().measuring; }));
  CHECK(figures == 3);
  CHECK(all_paused);
  CHECK_FALSE(steps_while_measuring);
  CHECK(steps_between);
  CHECK(peaks.state().message.find("training between them") != std::string::npos);
  CHECK_FALSE(live.session.pause_requested());
  live.session.request_stop();
  live.session.wait();
}

TEST_CASE("SessionPeaks: peaks measured under load are measured again on a quiet machine, not on a loaded one") {
  CHECK(core::measured_under_load([] { core::DevicePeaks p; p.load_average = 3.0; return p; }(), 0.2, 2));
  CHECK_FALSE(core::measured_under_load([] { core::DevicePeaks p; p.load_average = 3.0; return p; }(), 1.5, 2));
  CHECK_FALSE(core::measured_under_load([] { core::DevicePeaks p; p.load_average = 0.4; return p; }(), 0.2, 2));
  CHECK_FALSE(core::measured_under_load([] { core::DevicePeaks p; p.load_average = -1; return p; }(), 0.2, 2));
  CHECK_FALSE(core::measured_under_load([] { core::DevicePeaks p; p.load_average = 3.0; return p; }(), -1, 2));
  const fs::path cache = fresh_cache("under_load");
  const double threads = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
  core::DevicePeaks loaded = synthetic_cpu_peaks(5.41);
  loaded.load_average = 4 * threads;  // four runnable threads per core while it was measured
  core::save_peaks(cache, loaded);
  Live live;
  live.session.start();
  int calls = 0;
  const run::SessionPeaks::Measure measure = [&](const std::string&, const core::PeakProgress&) {
    ++calls;
    run::PeaksLookup found;
    found.peaks = synthetic_cpu_peaks(17.5);
    return found;
  };
  {  // on a machine as loaded as then: kept
    run::SessionPeaks busy(live.session, {"cpu"}, -1, cache, measure, 4 * threads);
    CHECK_FALSE(busy.missing());
  }
  run::SessionPeaks quiet(live.session, {"cpu"}, -1, cache, measure, 0.0);
  CHECK(quiet.missing());
  REQUIRE(quiet.state().backends[0].peaks);  // shown meanwhile, with why they are measured again
  CHECK(quiet.state().backends[0].peaks->value("stream_triad_nt") == 5.41);
  CHECK(quiet.state().backends[0].note.find("measured again") != std::string::npos);
  quiet.measure(true);
  REQUIRE(eventually([&] { return !quiet.state().measuring; }));
  CHECK(calls == 1);
  CHECK(quiet.state().backends[0].peaks->value("stream_triad_nt") == 17.5);
  CHECK_FALSE(quiet.missing());
  live.session.request_stop();
  live.session.wait();
}

TEST_CASE("cached CPU peaks measured under another SIMD level: the roofline takes the FMA figure of the level running") {
  if (!cpu::simd_level_available(cpu::SimdLevel::AVX512)) {
    MESSAGE("skipped: this CPU has no AVX-512 (the case switches from it to AVX2)");
    return;
  }
  const fs::path cache = fresh_cache("simd_level");
  core::DevicePeaks p = synthetic_cpu_peaks(20);
  p.cpu_kernel_simd = "avx512";  // measured with the AVX-512 kernels
  p.device = "test CPU (AVX-512 kernels)";
  for (const auto& [id, value] : {std::pair{"fma_avx512_nt", 200.0}, {"fma_avx2_nt", 150.0}}) {
    core::PeakFigure f;
    f.id = id;
    f.label = id;
    f.unit = "GFLOP/s";
    f.value = value;
    f.samples = std::vector<double>(5, value);
    f.method = "synthetic";
    p.figures.push_back(f);
  }
  core::save_peaks(cache, p);
  const cpu::SimdLevel before = cpu::active_simd_level();
  cpu::set_simd_level(cpu::SimdLevel::AVX2);
  const run::PeaksLookup found = run::lookup_peaks("cpu", -1, run::PeaksPolicy::CachedOnly, cache);
  cpu::set_simd_level(before);
  REQUIRE(found.cached);
  CHECK(found.peaks.cpu_kernel_simd == "avx2");
  CHECK(found.peaks.device.find("AVX2") != std::string::npos);
  const core::RoofCeilings roof = core::roof_ceilings(found.peaks, 2);
  CHECK(roof.compute_gflops == 150.0);
  CHECK(roof.compute_from == "fma_avx2_nt");
}
