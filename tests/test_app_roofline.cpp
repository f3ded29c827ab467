// train --report's "roofline" section as a user reads it: with known (synthetic) peaks in the cache, every kernel's
// intensity, achieved GFLOP/s, binding ceiling and % of roof follow by arithmetic from the report's own kernel rows
// and the ceilings; with an empty cache the peaks are measured once, said so, and read from the cache next time.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "core/peaks.hpp"
#include "gpu_test_util.hpp"
#include "run/peaks.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

core::PeakFigure fig(const std::string& id, const std::string& unit, double value) {
  core::PeakFigure f;
  f.id = id;
  f.label = "synthetic " + id;
  f.unit = unit;
  f.value = value;
  f.samples = std::vector<double>(5, value);
  f.method = "written by the test";
  return f;
}

// Peaks with a ridge at 2 FLOP/byte (gpu: 25 GB/s, 50 GFLOP/s; cpu with all threads: 10 GB/s, 20 GFLOP/s), under
// the matrix multiplications' intensity (tens of FLOP/byte) and above the element-wise kernels' (below 1).
core::DevicePeaks synthetic(const std::string& backend) {
  core::DevicePeaks p;
  p.backend = backend;
  p.key = run::peaks_key(backend, -1);
  p.device = "synthetic " + backend;
  p.measured_at = "2026-01-01 00:00:00";
  if (backend == "gpu") {
    p.figures = {fig("copy_shader", "GB/s", 20), fig("copy_transfer", "GB/s", 25),
                 fig("fma_fp32_scalar", "GFLOP/s", 40), fig("fma_fp32_vec4", "GFLOP/s", 50)};
  } else {
    p.threads = 2;
    p.cpu_kernel_simd = "avx2";  // as measured; the run takes the FMA figure of the level its kernels run
    p.figures = {fig("stream_copy_nt", "GB/s", 8), fig("stream_triad_nt", "GB/s", 10),
                 fig("stream_copy_1t", "GB/s", 6), fig("stream_triad_1t", "GB/s", 5)};
    for (const char* level : {"avx512", "avx2", "neon"}) {  // whichever this CPU's kernels run
      p.figures.push_back(fig(std::string("fma_") + level + "_nt", "GFLOP/s", 20));
      p.figures.push_back(fig(std::string("fma_") + level + "_1t", "GFLOP/s", 10));
    }
  }
  return p;
}

test::Result train_with_report(const std::string& backends, const std::string& report) {
  return test::run_cli({"train", "--dataset", "spiral", "--spiral-points", "300", "--hidden", "128,128", "--batch",
                        "128", "--epochs", "2", "--backend", backends, "--report", report});
}

}  // namespace

TEST_CASE("train --report: the roofline of every kernel follows from its row and the cached peaks") {
  const bool gpu = test::vulkan_device_or_skip("the gpu backend's roofline in train --report");
  test::CacheHome home("roofline-cached");
  const std::string backends = gpu ? "gpu,cpu" : "cpu";
  core::save_peaks(home.cache_file(), synthetic("cpu"));
  if (gpu) core::save_peaks(home.cache_file(), synthetic("gpu"));
  const std::string report = (home.path / "report.json").string();
  const test::Result r = train_with_report(backends, report);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("peaks: measuring") == std::string::npos);  // cached: nothing measured

  const json rep = json::parse(test::slurp(report));
  REQUIRE(rep.contains("roofline"));
  REQUIRE(rep["roofline"].size() == rep["backends"].size());
  int memory_bound = 0, compute_bound = 0;
  for (size_t b = 0; b < rep["backends"].size(); ++b) {
    const json& backend = rep["backends"][b];
    const json& roof = rep["roofline"][b];
    const std::string name = backend["name"];
    CAPTURE(name);
    CHECK(roof["backend"] == name);
    CHECK(roof["peaks"] == "cached");
    // The GPU's as cached; the CPU's this run's (its kernels' SIMD level named: run::lookup_peaks).
    if (name == "gpu") CHECK(roof["device"] == "synthetic gpu");
    else CHECK(r.out.find("cpu  device: " + roof["device"].get<std::string>()) != std::string::npos);
    const double bw = name == "gpu" ? 25 : 10, compute = name == "gpu" ? 50 : 20;
    CHECK(roof["bandwidth_gbps"].get<double>() == bw);  // the better of the two copies
    CHECK(roof["compute_gflops"].get<double>() == compute);
    CHECK(roof["ridge_intensity"].get<double>() == doctest::Approx(compute / bw));
    const json& rows = backend["kernels"];
    REQUIRE(roof["kernels"].size() == rows.size());
    REQUIRE(rows.size() > 3);
    for (size_t k = 0; k < rows.size(); ++k) {
      const json& row = rows[k];
      const json& dot = roof["kernels"][k];
      CAPTURE(row["name"]);
      CHECK(dot["name"] == row["name"]);
      const double gflops = row["gflops"], gbps = row["gbps"];
      REQUIRE(gbps > 0);
      const double intensity = gflops / gbps;  // FLOP per byte: the row's FLOPs / its bytes over the same time
      CHECK(dot["intensity"].get<double>() == doctest::Approx(intensity).epsilon(1e-9));
      CHECK(dot["gflops"].get<double>() == doctest::Approx(gflops).epsilon(1e-9));
      CHECK(dot["gbps"].get<double>() == doctest::Approx(gbps).epsilon(1e-9));
      const bool memory = intensity < compute / bw;
      CHECK(dot["bound"] == (memory ? "memory" : "compute"));
      CHECK(dot["roof_gflops"].get<double>() == doctest::Approx(std::min(compute, bw * intensity)).epsilon(1e-9));
      const double pct = memory ? 100 * gbps / bw : 100 * gflops / compute;
      CHECK(dot["pct_of_roof"].get<double>() == doctest::Approx(pct).epsilon(1e-9));
      (memory ? memory_bound : compute_bound) += 1;
    }
  }
  // The synthetic ridge sits between the element-wise kernels and the matrix multiplications: both kinds occur.
  CHECK(memory_bound > 0);
  CHECK(compute_bound > 0);
}

TEST_CASE("train --report with no cached peaks: measured once after training, said so, cached for the next run") {
  test::CacheHome home("roofline-measured");
  const std::string report = (home.path / "report.json").string();
  const test::Result first = train_with_report("cpu", report);
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  CHECK(first.out.find("peaks: measuring cpu") != std::string::npos);
  CHECK(first.out.find("measured in") != std::string::npos);
  const json rep = json::parse(test::slurp(report));
  CHECK(rep["roofline"][0]["peaks"] == "measured");
  CHECK(rep["roofline"][0]["bandwidth_gbps"].get<double>() > 0);
  CHECK(rep["roofline"][0]["compute_gflops"].get<double>() > 0);
  CHECK(fs::exists(home.cache_file()));

  const test::Result second = train_with_report("cpu", report);
  REQUIRE(second.code == 0);
  CHECK(second.out.find("peaks: measuring") == std::string::npos);
  CHECK(json::parse(test::slurp(report))["roofline"][0]["peaks"] == "cached");
}
