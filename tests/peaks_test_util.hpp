// What the tests of the device peaks share (test_core_peaks, test_core_peaks_posix): figures and peaks of a made-up
// GPU and CPU, and a scratch folder.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include "core/peaks.hpp"
#include "platform/files.hpp"

namespace test {

inline core::PeakFigure fig(const std::string& id, double value, const std::string& unit = "GB/s") {
  core::PeakFigure f;
  f.id = id;
  f.label = "label of " + id;
  f.unit = unit;
  f.value = value;
  f.samples = {value * 0.9, value, value * 1.1, value, value};
  f.method = "how " + id + " is measured";
  return f;
}

inline core::DevicePeaks gpu_peaks(const std::string& key, double copy = 20) {
  core::DevicePeaks p;
  p.backend = "gpu";
  p.key = key;
  p.device = "llvmpipe [software Vulkan: runs on the CPU]";
  p.software = true;
  p.measured_at = "2026-11-20 10:00:00";
  p.seconds = 3.5;
  p.load_average = 7.25;
  p.figures = {fig("copy_shader", copy), fig("copy_transfer", copy * 1.5), fig("fma_fp32_scalar", 40, "GFLOP/s"),
               fig("fma_fp32_vec4", 90, "GFLOP/s"), fig("dispatch_round_trip", 80, "us")};
  core::PeakFigure fp16 = fig("fma_fp16", 0, "GFLOP/s");
  fp16.samples.clear();
  fp16.note = "not measured: the device has no shaderFloat16";
  p.figures.push_back(fp16);
  return p;
}

inline core::DevicePeaks cpu_peaks() {
  core::DevicePeaks p;
  p.backend = "cpu";
  p.key = core::cpu_peaks_key("AMD EPYC", 2);
  p.device = "AMD EPYC (2 threads, AVX-512 6x32)";
  p.threads = 2;
  p.cpu_kernel_simd = "avx512";
  p.figures = {
      fig("stream_copy_1t", 15),          fig("stream_triad_1t", 17),           fig("stream_copy_nt", 25),
      fig("stream_triad_nt", 22),         fig("fma_avx512_1t", 200, "GFLOP/s"), fig("fma_avx512_nt", 400, "GFLOP/s"),
      fig("fma_avx2_1t", 100, "GFLOP/s"), fig("fma_avx2_nt", 210, "GFLOP/s")};
  return p;
}

// A fresh directory under the test's temporary folder, removed at the end.
struct TempDir {
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("trainscope-peaks-" + std::to_string(platform::process_id()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
  static inline int n = 0;
};

inline void write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace test
