// `trainscope peaks` as a user meets it: bad options refused, the CPU measured once and then read from the cache
// (the second run measures nothing), --remeasure, the JSON report with every figure's unit, samples and method, and a
// software Vulkan device labelled as such. Each test uses its own cache folder (XDG_CACHE_HOME), so it never touches
// the user's cache.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using test::run_cli;

using test::CacheHome;

const nlohmann::json* figure(const nlohmann::json& device, const std::string& id) {
  for (const auto& f : device["figures"])
    if (f["id"] == id) return &f;
  return nullptr;
}

}  // namespace

// Every measured figure of a device in the report: a rate's value is its best sample, a time's (us) the median of
// its samples (core::peak_of_repeats; computed here the plain way).
static void check_values_of_samples(const nlohmann::json& device) {
  for (const nlohmann::json& f : device["figures"]) {
    const double value = f["value"].get<double>();
    if (value <= 0) continue;  // not measured (a note says why)
    std::vector<double> v = f["samples"].get<std::vector<double>>();
    REQUIRE(!v.empty());
    std::sort(v.begin(), v.end());
    const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    INFO(f["id"].get<std::string>());
    CHECK(value == doctest::Approx(f["unit"] == "us" ? median : v.back()));
  }
}

TEST_CASE("peaks: bad options are refused with one line; --help gives every figure's unit and method") {
  test::check_bad_input({"peaks", "--repeats", "3"}, "--repeats 3");
  test::check_bad_input({"peaks", "--backend", "tpu"}, "--backend tpu");
  test::check_bad_input({"peaks", "--stream-mib", "1"}, "--stream-mib 1");
  test::check_bad_input({"peaks", "--report", (test::scratch_dir() / "no" / "such.json").string()}, "--report");
  const test::Result help = run_cli({"peaks", "--help"});
  CHECK(help.code == 0);
  for (const char* text : {"--remeasure", "--report", "--stream-mib", "GB/s", "GFLOP/s", "vkCmdCopyBuffer",
                           "copy shader", "STREAM", "shaderFloat16", "round trip", "back-to-back", "peaks.json",
                           "deviceUUID", "software"})
    CHECK_MESSAGE(help.out.find(text) != std::string::npos, text);
}

TEST_CASE("peaks --backend cpu: measured once, then read from the cache; --remeasure measures again") {
  CacheHome home("peaks-cpu");
  const std::string report = (test::scratch_dir() / "peaks-cpu.json").string();
  const std::vector<std::string> args = {"peaks", "--backend", "cpu", "--stream-mib", "16", "--report", report};
  const test::Result first = run_cli(args);
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  CHECK(first.err.find("measuring cpu: STREAM") != std::string::npos);
  CHECK(fs::exists(home.cache_file()));
  const nlohmann::json j = nlohmann::json::parse(test::slurp(report));
  REQUIRE(j["devices"].size() == 1);
  const nlohmann::json& cpu = j["devices"][0];
  CHECK(cpu["backend"] == "cpu");
  CHECK(cpu["cached"] == false);
  const int threads = cpu["threads"];
  CHECK(threads >= 1);
  for (const char* id : {"stream_copy_1t", "stream_copy_nt", "stream_triad_1t", "stream_triad_nt"}) {
    const nlohmann::json* f = figure(cpu, id);
    REQUIRE_MESSAGE(f != nullptr, id);
    CHECK((*f)["unit"] == "GB/s");
    CHECK((*f)["value"].get<double>() > 0);
    CHECK((*f)["samples"].size() >= 5);
    CHECK((*f)["method"].get<std::string>().find("STREAM") != std::string::npos);
  }
  // An FMA figure at the kernels' width, 1 thread and all; the all-threads one is not below the 1-thread one by
  // more than scheduling noise (each thread is charged its own CPU time).
  const std::string simd = cpu["cpu_kernel_simd"];
  if (!simd.empty()) {
    const nlohmann::json* one = figure(cpu, "fma_" + simd + "_1t");
    const nlohmann::json* all = figure(cpu, "fma_" + simd + "_nt");
    REQUIRE(one != nullptr);
    REQUIRE(all != nullptr);
    CHECK((*one)["value"].get<double>() > 1.0);
    CHECK((*all)["value"].get<double>() >= 0.5 * (*one)["value"].get<double>());
  }
  check_values_of_samples(cpu);
  CHECK(first.out.find("GB/s") != std::string::npos);
  CHECK(first.out.find("GFLOP/s") != std::string::npos);
  CHECK(first.out.find("best of 5") != std::string::npos);

  // Second run: from the cache, nothing measured, the same figures.
  const test::Result second = run_cli(args);
  REQUIRE(second.code == 0);
  CHECK(second.err.find("measuring") == std::string::npos);
  CHECK(second.out.find("from the cache") != std::string::npos);
  const nlohmann::json j2 = nlohmann::json::parse(test::slurp(report));
  CHECK(j2["devices"][0]["cached"] == true);
  CHECK(j2["devices"][0]["figures"] == cpu["figures"]);

  // --remeasure: measured again, the cache entry replaced (one entry for this CPU, not two).
  std::vector<std::string> again = args;
  again.push_back("--remeasure");
  const test::Result third = run_cli(again);
  REQUIRE(third.code == 0);
  CHECK(third.err.find("measuring cpu") != std::string::npos);
  const nlohmann::json cache = nlohmann::json::parse(test::slurp(home.cache_file()));
  CHECK(cache["devices"].size() == 1);
}

TEST_CASE("peaks --backend gpu: every GPU figure, a software device labelled as one") {
  if (!test::vulkan_device_or_skip("peaks --backend gpu")) return;
  CacheHome home("peaks-gpu");
  const std::string report = (test::scratch_dir() / "peaks-gpu.json").string();
  const test::Result r = run_cli({"peaks", "--backend", "gpu", "--report", report});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(report));
  REQUIRE(j["devices"].size() == 1);
  const nlohmann::json& gpu = j["devices"][0];
  for (const char* id : {"copy_shader", "copy_transfer", "fma_fp32_scalar", "fma_fp32_vec4", "dispatch_round_trip",
                         "dispatch_back_to_back"}) {
    const nlohmann::json* f = figure(gpu, id);
    REQUIRE_MESSAGE(f != nullptr, id);
    CHECK_MESSAGE((*f)["value"].get<double>() > 0, id);
  }
  const nlohmann::json* fp16 = figure(gpu, "fma_fp16");
  REQUIRE(fp16 != nullptr);
  CHECK(((*fp16)["value"].get<double>() > 0 || !(*fp16)["note"].get<std::string>().empty()));
  // vec4 FMAs are not slower than scalar ones beyond noise (four independent lanes per chain).
  CHECK(figure(gpu, "fma_fp32_vec4")->at("value").get<double>() >
        0.5 * figure(gpu, "fma_fp32_scalar")->at("value").get<double>());
  check_values_of_samples(gpu);
  const bool software = gpu["software"];
  CHECK((r.out.find("software Vulkan device") != std::string::npos) == software);
  CHECK(gpu["key"].get<std::string>().rfind("vulkan:", 0) == 0);
}
