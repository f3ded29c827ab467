// The batch-size sweep (run/sweep.hpp): every (batch, series) point measured or skipped with a reason, progress per
// point, a stop request honoured between points, the crossover found from the samples/s (and "none" explained,
// naming a software GPU), the JSON and CSV outputs. With the real CPU trainer on a small spiral; the crossover logic
// on hand-made points, so that it is checked both ways whatever this machine measures.
#include <doctest/doctest.h>

#include <atomic>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "cpu/trainer.hpp"
#include "run/data.hpp"
#include "run/sweep.hpp"

namespace {

run::SweepOptions small_sweep() {
  run::SweepOptions o;
  o.config.dataset = "spiral";
  o.config.spiral_points = 100;  // 300 training samples
  o.config.hidden = {16};
  o.config.backends = {"cpu"};
  o.batches = {1, 8, 64, 1000};  // 1000: more than the training set
  o.warmup_steps = 1;
  o.timed_steps = 2;
  return o;
}

run::SweepPoint point(const std::string& backend, int batch, double samples_per_s, const std::string& device = "") {
  run::SweepPoint p;
  p.backend = p.series = backend;
  p.batch = batch;
  p.steps = 3;
  p.samples_per_s = samples_per_s;
  p.device = device;
  return p;
}

}  // namespace

TEST_CASE("a sweep measures every batch size of every series, skips what does not fit, and reports progress") {
  run::SweepOptions o = small_sweep();
  o.cpu_threads = {1, 2};
  const core::DataSplit data = run::load_data(o.config);
  size_t calls = 0, last_total = 0;
  const run::SweepResult r =
      run::run_sweep(o, data, {{"cpu", cpu::make_trainer}}, [&](const run::SweepPoint&, size_t done, size_t total) {
        ++calls;
        CHECK(done == calls);
        last_total = total;
      });
  CHECK(calls == 8);
  CHECK(last_total == 8);
  REQUIRE(r.points.size() == 8);
  CHECK(r.series() == std::vector<std::string>{"cpu 1 thread", "cpu 2 threads"});
  for (const auto& p : r.points) {
    CAPTURE(p.series);
    CAPTURE(p.batch);
    if (p.batch == 1000) {
      CHECK_FALSE(p.measured());
      CHECK(p.skipped.find("300 training samples") != std::string::npos);
      continue;
    }
    REQUIRE(p.measured());
    CHECK(p.steps == 2);
    CHECK(p.ms_per_step > 0);
    CHECK(p.samples_per_s == doctest::Approx(p.batch * 1e3 / p.ms_per_step));
    CHECK(p.gflops > 0);
    CHECK(p.gbps > 0);
    CHECK(p.device.find(p.threads == 1 ? "1 thread" : "2 threads") != std::string::npos);
  }
  CHECK_FALSE(r.crossover);  // no GPU series
  CHECK(r.crossover_text.find("not both measured") != std::string::npos);
  const nlohmann::json j = run::sweep_json(o, r);
  CHECK(j["points"].size() == 8);
  CHECK(j["crossover"].is_null());
  const std::string csv = run::sweep_csv(r);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 9);  // header + 8 rows
}

TEST_CASE("a stop request ends the sweep between points; a backend that cannot be made is skipped with its error") {
  run::SweepOptions o = small_sweep();
  const core::DataSplit data = run::load_data(o.config);
  std::atomic<bool> stop{false};
  const run::SweepResult stopped = run::run_sweep(
      o, data, {{"cpu", cpu::make_trainer}}, [&](const run::SweepPoint&, size_t, size_t) { stop = true; }, &stop);
  CHECK(stopped.stopped);
  CHECK(stopped.points.size() == 1);

  int made = 0;
  run::BackendSpec broken{"gpu", [&](const core::TrainConfig&, const core::DataSplit&, const std::vector<float>&)
                                     -> std::unique_ptr<core::Trainer> {
                            ++made;
                            throw core::Error(core::ErrorKind::Vulkan, "Vulkan: no device here");
                          }};
  o.batches = {1, 8};
  const run::SweepResult r = run::run_sweep(o, data, {broken, {"cpu", cpu::make_trainer}});
  REQUIRE(r.points.size() == 4);
  CHECK(made == 1);  // tried once, then the same reason at every size
  for (const auto& p : r.points)
    if (p.backend == "gpu") CHECK(p.skipped.find("no device here") != std::string::npos);
  CHECK(r.speedup(1) == 0);
}

TEST_CASE("the crossover: the smallest batch at which the GPU is faster, or none with the reason") {
  run::SweepResult r;
  r.points = {point("gpu", 1, 10), point("cpu", 1, 100), point("gpu", 64, 500), point("cpu", 64, 400),
              point("gpu", 512, 5000), point("cpu", 512, 800)};
  run::find_crossover(r);
  REQUIRE(r.crossover);
  CHECK(*r.crossover == 64);
  CHECK(r.speedup(1) == doctest::Approx(0.1));
  CHECK(r.speedup(512) == doctest::Approx(6.25));

  run::SweepResult software;
  software.points = {point("gpu", 1, 10, "llvmpipe [software Vulkan: runs on the CPU]"), point("cpu", 1, 100),
                     point("gpu", 64, 50, "llvmpipe [software Vulkan: runs on the CPU]"), point("cpu", 64, 400)};
  run::find_crossover(software);
  CHECK_FALSE(software.crossover);
  CHECK(software.software_gpu);
  CHECK(software.crossover_text.find("none on this machine") == 0);
  CHECK(software.crossover_text.find("software Vulkan") != std::string::npos);

  run::SweepResult real = software;
  for (auto& p : real.points) p.device = p.backend == "gpu" ? "NVIDIA H100" : "";
  run::find_crossover(real);
  CHECK_FALSE(real.software_gpu);
  CHECK(real.crossover_text.find("larger batch sizes") != std::string::npos);
}
