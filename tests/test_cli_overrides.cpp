// The TRAINSCOPE_* environment overrides (issue 25): every value is checked and a bad one said once on stderr, as
// TRAINSCOPE_CPU_SIMD always was, never ignored in silence; and a GEMM tiling the device cannot run is refused before
// anything is compiled (TRAINSCOPE_GEMM_TILES=64,64,16,64,64 sent lavapipe's shader compiler into a 16-minute,
// 6.5 GB compile that SIGTERM did not stop). And a device profile without timestamps (issue 34, item 9): step times
// from the wall clock, kernel times and the busy share said to be unavailable, never 0.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "gpu/gemm_config.hpp"
#include "gpu_test_util.hpp"
#include "platform/process.hpp"

namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Sets the variables for the spawned trainscope while alive.
struct Environment {
  explicit Environment(std::vector<std::pair<std::string, std::string>> vars) : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) platform::set_env(name, value);
  }
  ~Environment() {
    for (const auto& [name, value] : vars_) platform::unset_env(name);
  }
  std::vector<std::pair<std::string, std::string>> vars_;
};

const std::vector<std::string> kTinyGpuRun{"train", "--backend", "gpu", "--dataset", "spiral", "--spiral-points",
                                           "50",    "--hidden",  "8",   "--epochs",  "1"};

}  // namespace

TEST_CASE("bad TRAINSCOPE_* values are each said once; a tiling the device cannot run is not compiled") {
  if (!test::vulkan_device_or_skip("the GEMM overrides")) return;
  const auto start = std::chrono::steady_clock::now();
  test::Result r;
  {
    Environment env({{"TRAINSCOPE_GEMM_TILES", "64,64,16,64,64"},
                     {"TRAINSCOPE_SPLIT_K", "0"},
                     {"TRAINSCOPE_GEMM_PATH", "fast"},
                     {"TRAINSCOPE_MEMORY_LIMIT", "lots"}});
    r = test::run_cli(kTinyGpuRun);
  }
  INFO("stderr: " << r.err);
  CHECK(r.code == 0);  // trained, with the device's own tiles
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(120));
  CHECK(count(r.err, "warning: TRAINSCOPE_GEMM_PATH=fast not understood (tiled, texel)") == 1);
  CHECK(count(r.err, "warning: TRAINSCOPE_SPLIT_K=0 not understood") == 1);
  CHECK(count(r.err, "warning: TRAINSCOPE_MEMORY_LIMIT=lots is not a size") == 1);
  CHECK(count(r.err, "4096 outputs per invocation (thread_m x thread_n), at most 64") == 1);
  CHECK(count(r.err, "ignored, using ") == 1);
}

TEST_CASE("TRAINSCOPE_GEMM_TILES with four numbers is said, and the device's own configuration kept") {
  // In this process, not a second `train` (which compiles every kernel again): choose_gemm_config is where the
  // variable is read. Before the fix sscanf matched four of five and the value was dropped without a word.
  const auto ctx = test::make_context("the GEMM overrides");
  if (!ctx) return;
  const gpu::GemmConfig own = gpu::choose_gemm_config(*ctx, core::Precision::FP32);
  const Environment env(std::vector<std::pair<std::string, std::string>>{{"TRAINSCOPE_GEMM_TILES", "64,64,16,4"}});
  std::fflush(stderr);
  const std::string file = (test::scratch_dir() / "stderr.txt").string();
  const int saved = ::dup(2), to_file = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(saved >= 0);
  REQUIRE(to_file >= 0);
  ::dup2(to_file, 2);
  const gpu::GemmConfig chosen = gpu::choose_gemm_config(*ctx, core::Precision::FP32);
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(to_file);
  const std::string err = test::slurp(file);
  INFO("stderr: " << err);
  CHECK(chosen == own);
  CHECK(count(err, "warning: TRAINSCOPE_GEMM_TILES=64,64,16,4 not understood") == 1);
}

TEST_CASE("a device without timestamps: train reports wall-clock step times and says kernel times are unavailable") {
  if (!test::vulkan_device_or_skip("the device without timestamps")) return;
  const std::filesystem::path profile = test::scratch_dir() / "untimed.json";
  std::ofstream(profile) << R"({"name": "untimed", "timestampValidBits": 0})";
  const std::filesystem::path report = test::scratch_dir() / "untimed.report.json";
  std::vector<std::string> args = kTinyGpuRun;
  args.insert(args.end(), {"--batch", "16", "--report", report.string()});  // 9 steps: 8 after the warm-up
  test::Result r;
  {
    const Environment env(
        std::vector<std::pair<std::string, std::string>>{{"TRAINSCOPE_DEVICE_PROFILE", profile.string()}});
    r = test::run_cli(args);
  }
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  // Before: "step time: gpu 0.00 ms", "busy ...: gpu 0%", mean_step_ms 0, samples_per_s 0.
  const size_t at = r.out.find("step time: gpu ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(r.out.substr(at + std::string("step time: gpu ").size())) > 0);
  CHECK(r.out.find("busy (kernels' share of the wall time): gpu unavailable (no timestamps)") != std::string::npos);
  CHECK(r.out.find("kernel times unavailable") != std::string::npos);
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& gpu = j.at("backends").at(0);
  CHECK(gpu.at("busy_share").is_null());
  CHECK(gpu.at("kernels").empty());
  REQUIRE(!gpu.at("precisions").empty());
  CHECK(gpu.at("precisions").at(0).at("mean_step_ms").get<double>() > 0);
  CHECK(gpu.at("precisions").at(0).at("samples_per_s").get<double>() > 0);
  CHECK(gpu.at("epochs").at(0).at("samples_per_s").get<double>() > 0);
}

TEST_CASE("a bad TRAINSCOPE_INJECT_FAULT is bad input, exit 2 before anything runs; an overflowing count too") {
  // Before: exit 1 (the GPU backend failed with it), and device-lost@99999999999999999999 was taken as LONG_MAX.
  for (const char* value : {"device-lost@99999999999999999999", "melt@3", "device-lost@"}) {
    CAPTURE(value);
    const Environment env(std::vector<std::pair<std::string, std::string>>{{"TRAINSCOPE_INJECT_FAULT", value}});
    test::check_bad_input(kTinyGpuRun, std::string("TRAINSCOPE_INJECT_FAULT=") + value + ": not a fault");
  }
}
