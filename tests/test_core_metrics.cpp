// KernelTable arithmetic on a hand-made plan and records, and the report.json schema.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/report.hpp"

namespace {

// Two matmul_forward entries (layers 1, 2) sharing one name, and one loss_reduce.
core::StepPlan small_plan() {
  core::StepPlan plan;
  core::PlanEntry a{core::Op::matmul_forward};
  a.layer = 0, a.B = 4, a.C = 8, a.OC = 16, a.flops = 1e6, a.bytes_read = 6e4, a.bytes_written = 4e4;
  core::PlanEntry b{core::Op::matmul_forward};
  b.layer = 1, b.B = 4, b.C = 16, b.OC = 3, b.flops = 2e6, b.bytes_read = 1.5e5, b.bytes_written = 5e4;
  core::PlanEntry r{core::Op::loss_reduce};
  r.B = 4, r.flops = 100, r.bytes_read = 396, r.bytes_written = 4;
  plan.entries = {a, b, r};
  return plan;
}

core::StepRecord record(long step, std::vector<double> kernel_ms, double step_ms, float loss = 1.0f) {
  core::StepRecord rec;
  rec.step = step;
  rec.loss = loss;
  rec.kernel_ms = std::move(kernel_ms);
  rec.step_ms = step_ms;
  return rec;
}

}  // namespace

TEST_CASE("KernelTable aggregates by kernel name after the warm-up step") {
  const core::StepPlan plan = small_plan();
  core::KernelTable table;  // warm-up 1
  table.add(plan, record(0, {100, 100, 100}, 400));  // warm-up: left out
  table.add(plan, record(1, {1, 2, 0.5}, 4));
  table.add(plan, record(2, {3, 2, 0.5}, 6));

  CHECK(table.steps_seen() == 3);
  CHECK(table.steps() == 2);
  CHECK(table.mean_step_ms() == doctest::Approx(5.0));

  const auto rows = table.rows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "matmul_forward");
  CHECK(rows[0].calls == 4);
  CHECK(rows[0].total_ms == doctest::Approx(8.0));
  CHECK(rows[0].mean_ms == doctest::Approx(2.0));
  CHECK(rows[0].pct_of_step == doctest::Approx(80.0));
  CHECK(rows[0].gflops == doctest::Approx(6e6 / 8e-3 / 1e9));  // 0.75 GFLOP/s
  CHECK(rows[0].gbps == doctest::Approx(6e5 / 8e-3 / 1e9));    // 0.075 GB/s

  CHECK(rows[1].name == "loss_reduce");
  CHECK(rows[1].calls == 2);
  CHECK(rows[1].mean_ms == doctest::Approx(0.5));
  CHECK(rows[1].pct_of_step == doctest::Approx(10.0));
  CHECK(rows[1].gflops == doctest::Approx(200 / 1e-3 / 1e9));
  CHECK(rows[1].gbps == doctest::Approx(800 / 1e-3 / 1e9));

  const auto entries = table.entry_rows();
  REQUIRE(entries.size() == 3);
  // Written out from the plan's fields (layer 1: 4x8 -> 4x16; layer 2: 4x16 -> 4x3), not from label() itself.
  CHECK(entries[0].name == "matmul_forward L1 (4x8 -> 4x16)");
  CHECK(entries[1].name == "matmul_forward L2 (4x16 -> 4x3)");
  CHECK(entries[0].calls == 2);
  CHECK(entries[0].mean_ms == doctest::Approx(2.0));
  CHECK(entries[0].pct_of_step == doctest::Approx(40.0));
  CHECK(entries[1].gflops == doctest::Approx(4e6 / 4e-3 / 1e9));

  const core::KernelRow step = table.step_row();
  CHECK(step.calls == 2);
  CHECK(step.mean_ms == doctest::Approx(5.0));
  CHECK(step.pct_of_step == doctest::Approx(100.0));
  CHECK(step.gflops == doctest::Approx(2 * (3e6 + 100) / 10e-3 / 1e9));
}

TEST_CASE("KernelTable: warm-up 0 counts every step; zero time gives 0 GFLOP/s, not infinity") {
  const core::StepPlan plan = small_plan();
  core::KernelTable table(0);
  table.add(plan, record(0, {0, 1, 0}, 1));
  CHECK(table.steps() == 1);
  const auto rows = table.rows();
  CHECK(rows[0].gflops == doctest::Approx(3e6 / 1e-3 / 1e9));  // both layers' FLOPs over layer 2's 1 ms
  CHECK(rows[1].gflops == 0);
  CHECK(rows[1].gbps == 0);
  CHECK(table.entry_rows()[0].gflops == 0);
}

TEST_CASE("KernelTable: an empty table and a record of the wrong length") {
  const core::StepPlan plan = small_plan();
  core::KernelTable table;
  CHECK(table.rows().empty());
  CHECK(table.mean_step_ms() == 0);
  CHECK(table.step_row().gflops == 0);
  try {
    table.add(plan, record(0, {1, 2}, 3));
    FAIL("expected core::Error");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::Internal);
  }
}

TEST_CASE("BackendRun::samples_per_s weights the epochs by their time") {
  core::BackendRun run;
  run.epochs = {{1, 0, 0, 0, 100, 2}, {2, 0, 0, 0, 200, 1}};
  CHECK(run.samples_per_s() == doctest::Approx(400.0 / 3));
  CHECK(core::BackendRun{}.samples_per_s() == 0);
}

namespace {

core::BackendRun fake_run(const std::string& name, double samples_per_s, int losses) {
  core::BackendRun run;
  run.name = name;
  run.device = name == "gpu" ? "Fake GPU" : "Fake CPU (4 threads)";
  run.epochs = {{1, 1.5, 1.2, 0.625, samples_per_s, 3}};
  for (int i = 0; i < losses; ++i) run.step_losses.push_back(2.0f - 0.01f * i);
  const core::StepPlan plan = small_plan();
  for (int i = 0; i < 3; ++i) run.kernels.add(plan, record(i, {1, 2, 0.5}, 4));
  return run;
}

}  // namespace

TEST_CASE("report.json has the documented schema") {
  core::TrainConfig cfg;
  cfg.lr = 0.001f;
  const std::vector<core::BackendRun> runs = {fake_run("gpu", 3000, 80), fake_run("cpu", 1000, 20)};
  const nlohmann::json j = core::report_json(cfg, runs);

  for (const char* key : {"dataset", "data_dir", "limit", "spiral_classes", "spiral_points", "spiral_noise", "hidden",
                          "activation", "optimizer", "lr", "momentum", "weight_decay", "beta1", "beta2", "eps",
                          "batch", "epochs", "seed", "backends", "sequential", "threads", "device",
                          "readback_interval", "validation"})
    CHECK_MESSAGE(j["config"].contains(key), key);
  CHECK(j["config"]["lr"].get<double>() == 0.001);  // the float's shortest decimal form, not 0.0010000000474974513
  CHECK(j["config"]["hidden"] == nlohmann::json({256, 128}));

  REQUIRE(j["backends"].size() == 2);
  const auto& gpu = j["backends"][0];
  CHECK(gpu["name"] == "gpu");
  CHECK(gpu["device"] == "Fake GPU");
  CHECK_FALSE(gpu.contains("error"));
  REQUIRE(gpu["epochs"].size() == 1);
  for (const char* key : {"epoch", "train_loss", "test_loss", "test_accuracy", "samples_per_s", "seconds"})
    CHECK_MESSAGE(gpu["epochs"][0].contains(key), key);
  CHECK(gpu["epochs"][0]["test_accuracy"].get<double>() == 0.625);
  CHECK(gpu["step_losses"].size() == core::kReportStepLosses);  // 80 losses, the first 50 kept
  CHECK(j["backends"][1]["step_losses"].size() == 20);
  REQUIRE(gpu["kernels"].size() == 2);
  for (const char* key : {"name", "calls", "mean_ms", "gflops", "gbps", "pct_of_step"})
    CHECK_MESSAGE(gpu["kernels"][0].contains(key), key);
  CHECK(gpu["kernels"][0]["calls"] == 4);
  CHECK(gpu["kernels"][0]["mean_ms"].get<double>() == doctest::Approx(1.5));
  CHECK(j["speedup"].get<double>() == doctest::Approx(3.0));
}

TEST_CASE("report.json: speedup is null without both backends; an error is reported") {
  core::BackendRun cpu = fake_run("cpu", 1000, 5);
  core::BackendRun gpu;
  gpu.name = "gpu";
  gpu.error = "no Vulkan loader";
  const nlohmann::json j = core::report_json(core::TrainConfig{}, {gpu, cpu});
  CHECK(j["speedup"].is_null());
  CHECK(j["backends"][0]["error"] == "no Vulkan loader");
  CHECK(j["backends"][0]["epochs"].empty());
  CHECK(core::report_json(core::TrainConfig{}, {cpu})["speedup"].is_null());
}

TEST_CASE("write_report_json writes the file atomically and reports unwritable paths") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("trainscope_test_report_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "r.json").string();
  const std::vector<core::BackendRun> runs = {fake_run("cpu", 1000, 5)};
  core::write_report_json(path, core::TrainConfig{}, runs);
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  in.close();  // Windows does not remove a file that is open
  CHECK(j == core::report_json(core::TrainConfig{}, runs));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);  // no temporary left behind

  for (const std::string& bad : {(dir / "missing" / "r.json").string(), dir.string()}) {
    try {
      core::write_report_json(bad, core::TrainConfig{}, runs);
      FAIL("expected core::Error for " << bad);
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::Io);
      CHECK(std::string(e.what()).find(bad) != std::string::npos);
    }
  }
  fs::remove_all(dir);
}
