// The TRAINSCOPE_* environment overrides (issue 25): every value is checked and a bad one said once on stderr, as
// TRAINSCOPE_CPU_SIMD always was, never ignored in silence; and a GEMM tiling the device cannot run is refused before
// anything is compiled (TRAINSCOPE_GEMM_TILES=64,64,16,64,64 sent lavapipe's shader compiler into a 16-minute,
// 6.5 GB compile that SIGTERM did not stop).
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"

namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Sets the variables for the spawned trainscope while alive.
struct Environment {
  explicit Environment(std::vector<std::pair<const char*, const char*>> vars) : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) ::setenv(name, value, 1);
  }
  ~Environment() {
    for (const auto& [name, value] : vars_) ::unsetenv(name);
  }
  std::vector<std::pair<const char*, const char*>> vars_;
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

  {
    // Four numbers: sscanf matched four of five, and the value was dropped without a word.
    Environment env(std::vector<std::pair<const char*, const char*>>{{"TRAINSCOPE_GEMM_TILES", "64,64,16,4"}});
    r = test::run_cli(kTinyGpuRun);
  }
  INFO("stderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(count(r.err, "warning: TRAINSCOPE_GEMM_TILES=64,64,16,4 not understood") == 1);
}
