// Device peaks: the ceilings chosen from the figures, JSON round trips, and the per-device cache file (keys kept
// apart, an entry replaced, corrupt, foreign or odd files ignored with a warning, never a crash). Its folder, its
// lock and links or another user's file as the cache: test_core_peaks_posix.cpp. This file runs on Windows too.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/measure.hpp"
#include "core/peaks.hpp"
#include "peaks_test_util.hpp"

namespace fs = std::filesystem;
using test::cpu_peaks;
using test::fig;
using test::gpu_peaks;
using test::TempDir;
using test::write;

TEST_CASE("roof ceilings: the better bandwidth and compute figure for the backend and thread count") {
  core::DevicePeaks hardware = gpu_peaks("k");
  hardware.software = false;
  const core::RoofCeilings g = core::roof_ceilings(hardware, 0);
  CHECK(g.bandwidth_gbps == doctest::Approx(30.0));  // vkCmdCopyBuffer beats the copy shader here
  CHECK(g.bandwidth_from == "label of copy_transfer");
  // A software device (lavapipe): what its kernels can reach, the copy shader, however fast its vkCmdCopyBuffer.
  const core::RoofCeilings soft = core::roof_ceilings(gpu_peaks("k"), 0);
  CHECK(soft.bandwidth_gbps == doctest::Approx(20.0));
  CHECK(soft.bandwidth_from == "label of copy_shader");
  CHECK(g.compute_gflops == doctest::Approx(90.0));  // vec4 beats scalar
  CHECK(g.compute_from == "label of fma_fp32_vec4");

  const core::RoofCeilings all = core::roof_ceilings(cpu_peaks(), 2);
  CHECK(all.bandwidth_gbps == doctest::Approx(25.0));
  CHECK(all.compute_gflops == doctest::Approx(400.0));  // the kernels' width (AVX-512), not the AVX2 figure
  const core::RoofCeilings one = core::roof_ceilings(cpu_peaks(), 1);
  CHECK(one.bandwidth_gbps == doctest::Approx(17.0));
  CHECK(one.compute_gflops == doctest::Approx(200.0));
  core::DevicePeaks avx2 = cpu_peaks();
  avx2.cpu_kernel_simd = "avx2";  // TRAINSCOPE_CPU_SIMD=avx2: the kernels run AVX2
  CHECK(core::roof_ceilings(avx2, 2).compute_gflops == doctest::Approx(210.0));

  const core::RoofCeilings none = core::roof_ceilings(core::DevicePeaks{}, 2);
  CHECK(none.bandwidth_gbps == 0);
  CHECK(none.compute_gflops == 0);
}

TEST_CASE("keys name the device: deviceUUID and driver version, CPU model and thread count") {
  std::array<unsigned char, 16> uuid{};
  for (int i = 0; i < 16; ++i) uuid[static_cast<size_t>(i)] = static_cast<unsigned char>(i * 17);
  CHECK(core::gpu_peaks_key(uuid, 4194311) == "vulkan:00112233445566778899aabbccddeeff:4194311");
  CHECK(core::gpu_peaks_key(uuid, 1) != core::gpu_peaks_key(uuid, 2));
  CHECK(core::cpu_peaks_key("AMD EPYC", 2) == "cpu:AMD EPYC:2 threads");
}

TEST_CASE("peaks survive a JSON round trip; bad entries are refused naming the field") {
  const core::DevicePeaks p = gpu_peaks("vulkan:ab:1");
  const core::DevicePeaks q = core::peaks_from_json(core::peaks_to_json(p));
  CHECK(q.key == p.key);
  CHECK(q.software);
  CHECK(q.load_average == doctest::Approx(7.25));
  REQUIRE(q.figures.size() == p.figures.size());
  CHECK(q.figures[3].id == "fma_fp32_vec4");
  CHECK(q.figures[3].samples == p.figures[3].samples);
  CHECK(q.find("fma_fp16")->note == "not measured: the device has no shaderFloat16");
  CHECK(q.value("fma_fp16") == 0);
  CHECK(q.value("no_such_figure") == 0);

  nlohmann::json j = core::peaks_to_json(p);
  j["figures"][0]["value"] = -3.0;
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("copy_shader"), core::Error);
  j = core::peaks_to_json(p);
  j.erase("key");
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("\"key\""), core::Error);
  j = core::peaks_to_json(p);
  j["backend"] = "tpu";
  CHECK_THROWS_AS(core::peaks_from_json(j), core::Error);
  j = core::peaks_to_json(p);
  j["figures"][1]["samples"] = "fast";
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("samples"), core::Error);
}

TEST_CASE("the cache keeps one entry per device key and replaces an entry on re-measuring") {
  TempDir dir;
  const fs::path path = dir.path / "sub" / "peaks.json";  // the directory is created
  std::string warning;
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK(warning.empty());  // no cache yet is not a problem

  core::save_peaks(path, gpu_peaks("vulkan:aa:1", 20));
  core::save_peaks(path, cpu_peaks());
  core::save_peaks(path, gpu_peaks("vulkan:bb:1", 33));
  CHECK(core::load_peaks_cache(path).size() == 3);
  core::save_peaks(path, gpu_peaks("vulkan:aa:1", 44));  // re-measured
  const auto all = core::load_peaks_cache(path, &warning);
  CHECK(warning.empty());
  CHECK(all.size() == 3);
  const auto aa = core::find_cached_peaks(path, "vulkan:aa:1");
  REQUIRE(aa.has_value());
  CHECK(aa->value("copy_shader") == doctest::Approx(44.0));
  CHECK(core::find_cached_peaks(path, "vulkan:bb:1")->value("copy_shader") == doctest::Approx(33.0));
  CHECK(core::find_cached_peaks(path, core::cpu_peaks_key("AMD EPYC", 2)).has_value());
  CHECK_FALSE(core::find_cached_peaks(path, core::cpu_peaks_key("AMD EPYC", 4)).has_value());  // another VM size
  // No temporary files are left beside it (atomic writes renamed into place).
  int files = 0;
  for (const auto& e : fs::directory_iterator(path.parent_path())) files += e.path().filename().string()[0] == '.';
  CHECK(files == 0);
}

TEST_CASE("a corrupt, foreign, outdated or odd cache is ignored with a warning and replaced at the next save") {
  TempDir dir;
  const fs::path path = dir.path / "peaks.json";
  std::string warning;
  for (const std::string& text :
       {std::string("{not json"), std::string("[1, 2, 3]"), std::string(R"({"format": "other", "devices": []})"),
        std::string(R"({"format": "trainscope-peaks", "version": 999, "devices": []})"),
        // version 1 kept the median of a rate's repeats, where 2 keeps the best: measured again
        std::string(R"({"format": "trainscope-peaks", "version": 1, "devices": []})"), std::string()}) {
    CAPTURE(text);
    write(path, text);
    warning.clear();
    CHECK(core::load_peaks_cache(path, &warning).empty());
    CHECK(warning.find("measured again") != std::string::npos);
  }
  // One bad entry among good ones: the good ones are kept.
  nlohmann::json good = core::peaks_to_json(cpu_peaks());
  nlohmann::json bad = good;
  bad["figures"] = 7;
  write(path, nlohmann::json({{"format", "trainscope-peaks"}, {"version", 2}, {"devices", {bad, good}}}).dump());
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).size() == 1);
  CHECK(warning.find("1 entry could not be read") != std::string::npos);

  write(path, "{garbage");
  core::save_peaks(path, gpu_peaks("vulkan:cc:2"));
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).size() == 1);
  CHECK(warning.empty());

  // A directory where the file should be: a warning, nothing read, no crash; saving then fails with a message.
  const fs::path odd = dir.path / "odd.json";
  fs::create_directories(odd);
  warning.clear();
  CHECK(core::load_peaks_cache(odd, &warning).empty());
  CHECK(warning.find("directory") != std::string::npos);
  CHECK_THROWS_AS(core::save_peaks(odd, cpu_peaks()), core::Error);
  // Too large to be a peaks cache: not read.
  write(path, std::string(core::kMaxPeaksCacheBytes + 10, ' '));
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK_FALSE(warning.empty());
}

// A rate's peak is its fastest repeat (noise only slows a repeat down; STREAM reports its best rate too); a time's is
// the median of its repeats (what a typical call pays), against the plain definitions.
TEST_CASE("a peak of repeats: the best of a rate, the median of a time") {
  const std::vector<double> samples{142.4, 162.2, 152.3, 162.3, 157.2};  // an FMA probe's 1-thread repeats on a VM
  CHECK(core::peak_of_repeats(samples, true) == 162.3);
  CHECK(core::peak_of_repeats(samples, false) == 157.2);
  CHECK(core::peak_of_repeats({35.0, 34.5, 55.1, 34.9}, false) == doctest::Approx(34.95));
  CHECK(core::peak_of_repeats({}, true) == 0);
  core::PeakFigure rate = fig("fma_avx2_1t", 0), time = fig("dispatch_round_trip", 0);
  rate.unit = "GFLOP/s";
  time.unit = "us";
  CHECK(rate.is_rate());
  CHECK(std::string(rate.statistic()) == "best");
  CHECK_FALSE(time.is_rate());
  CHECK(std::string(time.statistic()) == "median");
}
