// The summary's line of peak shares (app::peak_share_line): each backend's achieved GFLOP/s over its measured fp32 FMA
// peak from the peaks cache (the better GPU figure; the CPU's at its kernels' width and its thread count), worked out
// here by hand from the test peaks; a backend without cached peaks, or a CPU run on another thread count than its
// peaks were measured on, said so instead of a share.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/summary.hpp"
#include "peaks_test_util.hpp"

namespace {

core::BackendPeaks cached(core::DevicePeaks p) {
  core::BackendPeaks b;
  b.backend = p.backend;
  b.peaks = std::move(p);
  b.source = "cached";
  return b;
}

}  // namespace

TEST_CASE("peak_share_line: each backend's step against its measured FMA peak") {
  // test::gpu_peaks: fp32 FMA scalar 40, vec4 90 GFLOP/s; test::cpu_peaks: AVX-512 200 (1 thread), 400 (2 threads).
  const std::vector<core::BackendPeaks> peaks{cached(test::gpu_peaks("k")), cached(test::cpu_peaks())};
  CHECK(app::peak_share_line({{"gpu", 45, 0}, {"cpu", 100, 0}}, peaks) ==
        "of the measured fp32 FMA peak: gpu 50% of 90 GFLOP/s (label of fma_fp32_vec4), cpu 25% of 400 GFLOP/s "
        "(label of fma_avx512_nt)");
  // All hardware threads are the thread count the CPU's peaks were measured on (2 here), 1 thread its own figure.
  CHECK(app::peak_share_line({{"cpu", 100, 2}}, peaks) ==
        "of the measured fp32 FMA peak: cpu 25% of 400 GFLOP/s (label of fma_avx512_nt)");
  CHECK(app::peak_share_line({{"cpu", 150, 1}}, peaks) ==
        "of the measured fp32 FMA peak: cpu 75% of 200 GFLOP/s (label of fma_avx512_1t)");
  // Another thread count: no share against a peak of other threads.
  CHECK(app::peak_share_line({{"cpu", 150, 4}}, peaks) ==
        "of the measured fp32 FMA peak: cpu: its peak was measured on 2 threads, this run used 4");
}

TEST_CASE("peak_share_line: a backend missing from the cache is named; none cached, a hint; none timed, no line") {
  core::BackendPeaks missing;
  missing.backend = "gpu";
  missing.source = "not measured";
  const std::vector<core::BackendPeaks> peaks{missing, cached(test::cpu_peaks())};
  CHECK(app::peak_share_line({{"gpu", 45, 0}, {"cpu", 100, 0}}, peaks) ==
        "of the measured fp32 FMA peak: gpu not in the peaks cache (trainscope peaks measures it), cpu 25% of 400 "
        "GFLOP/s (label of fma_avx512_nt)");
  CHECK(app::peak_share_line({}, peaks).empty());
  // Nothing in the cache at all: one hint, not a part per backend.
  CHECK(app::peak_share_line({{"gpu", 45, 0}, {"cpu", 100, 0}}, {missing}) ==
        "of the measured fp32 FMA peak: not measured on this machine yet (trainscope peaks measures the devices once)");
  CHECK(app::peak_share_line({{"gpu", 0, 0}}, peaks).empty());  // no kernel time (a device without timestamps)
}
