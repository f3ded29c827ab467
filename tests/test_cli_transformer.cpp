// `trainscope train --model transformer` as a user meets it: its settings' errors (exit code 2, one line naming the
// option and what to do), and a small run of the digit reversal task on both backends that learns it and writes the
// report. TRAINSCOPE_BINARY names the executable (set by ctest).
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"

using test::check_bad_input;
using test::Result;
using test::run_cli;
using test::scratch_dir;

TEST_CASE("transformer settings: refused with one line naming the option and what to do") {
  const std::vector<std::string> base = {"train", "--dataset", "reverse", "--backend", "cpu", "--epochs", "1"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  check_bad_input(with({"--embed", "30", "--heads", "4"}), "--embed 30: the width must be a multiple of --heads 4");
  check_bad_input(with({"--embed", "256", "--heads", "2"}), "a head size of 128 is more than the fused attention's 64");
  check_bad_input(with({"--context", "7"}), "--context 7: the reversal task's sequences");
  check_bad_input(with({"--context", "1"}), "--context");
  check_bad_input(with({"--layers", "0"}), "--layers");
  check_bad_input(with({"--hidden", "64"}), "--hidden sets the MLP's layers");
  check_bad_input(with({"--model", "mlp"}), "use --model transformer");
  check_bad_input(with({"--input", "host"}), "--input host: the transformer");
  check_bad_input(with({"--unfused"}), "--unfused: the transformer");
  check_bad_input({"train", "--dataset", "spiral", "--model", "transformer", "--backend", "cpu"},
                  "use --dataset reverse or --dataset fortunes");
  check_bad_input({"train", "--dataset", "spiral", "--layers", "3", "--backend", "cpu"},
                  "--layers sets up the transformer: add --model transformer");
  check_bad_input({"train", "--dataset", "spiral", "--attention", "naive", "--backend", "cpu"},
                  "--attention naive: the mlp model has no attention layers");
  check_bad_input(with({"--attention", "flash"}), "--attention");
  check_bad_input(with({"--attention", "naive", "--batch", "65536", "--context", "512", "--heads", "8"}),
                  "more than the naive kernels index");
}

TEST_CASE("train --dataset reverse: the transformer learns to reverse 3 digits on both backends, same losses") {
  const bool gpu = test::vulkan_device_or_skip("the transformer on the GPU backend");
  const std::string report = (scratch_dir() / "transformer.json").string();
  // 3 digits: 1,000 strings; the first 1,600 of the training sequences in one epoch, 100 steps of 16.
  std::vector<std::string> args = {"train",   "--dataset", "reverse", "--context", "6",     "--embed", "32",
                                   "--heads", "4",         "--layers", "2",        "--batch", "16",    "--epochs",
                                   "1",       "--limit",   "1600",     "--lr",     "3e-3",    "--report", report,
                                   "--backend", gpu ? "gpu,cpu" : "cpu"};
  const Result r = run_cli(args);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("transformer 2 blocks, embed 32, 4 heads, context 6, vocab 11") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(report));
  CHECK(j["config"]["model"] == "transformer");
  CHECK(j["config"]["embed"] == 32);
  for (const auto& run : j["backends"]) {
    CAPTURE(run["name"].get<std::string>());
    // The answer positions of held-out strings: every digit of the reverse right in 95% of them or more.
    CHECK(run["epochs"].back()["test_accuracy"].get<double>() >= 0.95);
  }
  if (gpu) {  // the same weights and batches: the same losses up to fp32's rounding
    const auto& a = j["backends"][0]["step_losses"];
    const auto& b = j["backends"][1]["step_losses"];
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < 20; ++i) CHECK(std::abs(a[i].get<double>() - b[i].get<double>()) <= 1e-4 * b[i].get<double>());
  }
}

TEST_CASE("train --attention naive: the same losses as fused on both backends, the scores counted in memory") {
  const bool gpu = test::vulkan_device_or_skip("naive attention on the GPU backend");
  auto run = [&](const std::string& attention) {
    const std::string report = (scratch_dir() / ("attention-" + attention + ".json")).string();
    const std::vector<std::string> args = {
        "train",   "--dataset", "reverse", "--context", "8",   "--embed",    "16",      "--heads",     "2",
        "--layers", "2",        "--batch", "16",        "--epochs", "1",     "--limit", "320",         "--report",
        report,    "--attention", attention, "--backend", gpu ? "gpu,cpu" : "cpu"};
    const Result r = run_cli(args);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(test::slurp(report));
  };
  const nlohmann::json fused = run("fused"), naive = run("naive");
  CHECK(naive["config"]["attention"] == "naive");
  for (size_t b = 0; b < naive["backends"].size(); ++b) {
    const nlohmann::json& n = naive["backends"][b];
    const nlohmann::json& f = fused["backends"][b];
    CAPTURE(n["name"].get<std::string>());
    // 20 steps: the same math rounded in another order, within fp32's tolerance.
    REQUIRE(n["step_losses"].size() == 20);
    for (size_t i = 0; i < 20; ++i)
      CHECK(std::abs(n["step_losses"][i].get<double>() - f["step_losses"][i].get<double>()) <=
            1e-4 * f["step_losses"][i].get<double>());
    // 2 layers x batch 16 x 2 heads x 8 x 8 scores in fp32; none fused.
    CHECK(n["memory"]["attention_scores"] == 2 * 16 * 2 * 8 * 8 * 4);
    CHECK(f["memory"]["attention_scores"] == 0);
    bool scores = false, fused_kernel = false;
    for (const auto& k : n["kernels"]) {
      scores |= k["name"] == "attention_naive_scores";
      fused_kernel |= k["name"] == "attention_forward_fused";
    }
    CHECK(scores);
    CHECK_FALSE(fused_kernel);
  }
}

TEST_CASE("sweep --context N,N --attention fused,naive: each context in both forms, the scores counted") {
  const std::string report = (scratch_dir() / "context-sweep.json").string();
  const Result r = run_cli({"sweep", "--dataset", "reverse", "--context", "8,16", "--attention", "fused,naive",
                            "--embed", "16", "--heads", "2", "--batch", "4", "--backend", "cpu", "--steps", "1",
                            "--warmup", "0", "--report", report});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("context 16: naive takes cpu") != std::string::npos);
  const nlohmann::json rows = nlohmann::json::parse(test::slurp(report))["context_sweep"];
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    CAPTURE(row.dump());
    const long T = row["context"].get<long>();
    // 2 attention layers x batch 4 x 2 heads x T x T scores in fp32, naive; none fused.
    CHECK(row["attention_scores_bytes"] == (row["attention"] == "naive" ? 2 * 4 * 2 * T * T * 4 : 0));
    REQUIRE(row["points"].size() == 1);
    CHECK(row["points"][0]["ms_per_step"].get<double>() > 0);
  }
  CHECK(rows[0]["context"] == 8);
  CHECK(rows[3]["context"] == 16);
  CHECK(rows[3]["attention"] == "naive");
  check_bad_input({"sweep", "--dataset", "spiral", "--context", "8,16", "--backend", "cpu"}, "sweeps a transformer");
  check_bad_input({"sweep", "--dataset", "reverse", "--context", "8,16", "--batch", "4,8", "--backend", "cpu"},
                  "one batch size");
  check_bad_input({"sweep", "--dataset", "reverse", "--attention", "flash", "--backend", "cpu"}, "--attention flash");
}
