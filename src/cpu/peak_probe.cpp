// STREAM on the thread pool and the CPU's DevicePeaks (peak_probe.hpp).
#include "cpu/peak_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>


#include "core/measure.hpp"
#include "cpu/fma_probe.hpp"
#include "cpu/simd.hpp"
#include "cpu/trainer.hpp"
#include "platform/system.hpp"

namespace cpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMiB = size_t{1} << 20;
// Elements per chunk of the pool: large enough that a chunk streams for tens of microseconds.
constexpr size_t kStreamGrain = size_t{1} << 16;

int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// "avx512" / "avx2" / "neon": the id part of a level's figures.
std::string level_id(SimdLevel level) {
  return level == SimdLevel::AVX512 ? "avx512" : level == SimdLevel::NEON ? "neon" : "avx2";
}

std::string threads_text(int t) { return fmt::format("{} thread{}", t, t == 1 ? "" : "s"); }

core::PeakFigure stream_figure(const StreamPeak& s, const std::string& suffix) {
  const bool copy = s.kernel == StreamKernel::Copy;
  core::PeakFigure f;
  f.id = std::string(copy ? "stream_copy" : "stream_triad") + suffix;
  f.label = fmt::format("memory bandwidth: STREAM {}, {}", copy ? "copy" : "triad", threads_text(s.threads));
  f.unit = "GB/s";
  f.value = s.gbps;
  f.samples = s.samples;
  f.method = fmt::format(
      "STREAM {} (McCalpin) over arrays of {} MiB of doubles each, {} on the kernels' thread pool; bytes as STREAM "
      "counts them ({}) / wall-clock time of a pass; the best of {} passes after one untimed pass",
      copy ? "copy c[i] = a[i]" : "triad a[i] = b[i] + s*c[i]", s.array_bytes / kMiB, threads_text(s.threads),
      copy ? "16 per element: one read, one write" : "24 per element: two reads, one write", s.samples.size());
  return f;
}

core::PeakFigure fma_figure(const FmaPeak& p, bool all_threads, bool kernels_width, bool widest) {
  core::PeakFigure f;
  f.id = fma_peak_id(p.level, all_threads);
  std::string role;
  if (kernels_width && widest) role = " (kernels', widest)";
  else if (kernels_width) role = " (kernels')";
  else if (widest) role = " (widest)";
  f.label = fmt::format("fp32 FMA: {}{}, {}", to_string(p.level), role, threads_text(p.threads));
  f.unit = "GFLOP/s";
  f.value = p.gflops;
  f.samples = p.samples;
  f.method = fmt::format(
      "{} independent chains of {} vector FMAs (acc = acc*m + c, no loads or stores) per thread on {}, threads "
      "started together; an FMA counts 2 FLOP per lane; each thread charged its own CPU time, so other programs on "
      "the machine do not lower it; the best of {} repeats{}",
      p.chains, p.width, threads_text(p.threads), p.samples.size(),
      kernels_width ? "; the SIMD width the training kernels run" : "; not the width the training kernels run");
  return f;
}

}  // namespace

size_t stream_array_bytes() {
  const size_t llc = static_cast<size_t>(platform::last_level_cache_bytes());
  const size_t memory = static_cast<size_t>(platform::physical_memory_bytes());
  size_t bytes = std::clamp<size_t>(4 * llc, 64 * kMiB, 128 * kMiB);
  if (memory > 0) bytes = std::min(bytes, std::max<size_t>(16 * kMiB, memory / 16));
  return bytes / kMiB * kMiB;
}

StreamArrays::StreamArrays(size_t bytes, ThreadPool& pool)
    : n(std::max<size_t>(1, bytes / sizeof(double))), a(new double[n]), b(new double[n]), c(new double[n]) {
  pool.parallel_for(n, kStreamGrain, [this](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.5;
    }
  });
}

StreamPeak measure_stream(StreamKernel kernel, ThreadPool& pool, StreamArrays& arrays, int repeats) {
  const size_t n = arrays.n;
  const double s = 3.0;
  double* pa = arrays.a.get();
  const double* pb = arrays.b.get();
  double* pc = arrays.c.get();
  auto pass = [&] {
    if (kernel == StreamKernel::Copy)
      pool.parallel_for(n, kStreamGrain, [=](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) pc[i] = pa[i];
      });
    else
      pool.parallel_for(n, kStreamGrain, [=](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
      });
  };
  const double bytes = (kernel == StreamKernel::Copy ? 2.0 : 3.0) * static_cast<double>(n) * sizeof(double);
  StreamPeak peak;
  peak.kernel = kernel;
  peak.threads = pool.size();
  peak.array_bytes = n * sizeof(double);
  pass();  // untimed: the first pass after the set-up
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = Clock::now();
    pass();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    peak.samples.push_back(seconds > 0 ? bytes / seconds / 1e9 : 0);
  }
  peak.gbps = core::peak_of_repeats(peak.samples, true);
  return peak;
}

std::string fma_peak_id(SimdLevel level, bool all_threads) {
  return "fma_" + level_id(level) + (all_threads ? "_nt" : "_1t");
}

std::string cpu_peaks_key() { return core::cpu_peaks_key(cpu_model_name(), hardware_threads()); }

void use_active_level(core::DevicePeaks& peaks) {
  const SimdLevel level = active_simd_level();
  peaks.cpu_kernel_simd = level == SimdLevel::Portable ? "" : level_id(level);
  peaks.device = cpu_description(hardware_threads());
}

core::DevicePeaks measure_cpu_peaks(int repeats, const core::PeakProgress& progress, size_t stream_bytes) {
  const auto start = Clock::now();
  const int threads = hardware_threads();
  repeats = std::max(5, repeats);
  auto say = [&](const std::string& what) {
    if (progress) progress(what);
  };
  core::DevicePeaks peaks;
  peaks.backend = "cpu";
  peaks.key = cpu_peaks_key();
  peaks.device = cpu_description(threads);
  peaks.threads = threads;
  peaks.load_average = core::load_average();
  peaks.measured_at = core::local_time_text();

  {
    const size_t array_bytes = stream_bytes > 0 ? stream_bytes : stream_array_bytes();
    say(fmt::format("cpu: STREAM, allocating 3 arrays of {} MiB", array_bytes / kMiB));
    std::vector<int> counts = {1};
    if (threads > 1) counts.push_back(threads);
    std::vector<std::unique_ptr<ThreadPool>> pools;
    for (int t : counts) pools.push_back(std::make_unique<ThreadPool>(t));
    StreamArrays arrays(array_bytes, *pools.back());
    for (StreamKernel kernel : {StreamKernel::Copy, StreamKernel::Triad})
      for (auto& pool : pools) {
        const int t = pool->size();
        say(fmt::format("cpu: STREAM {}, {}", kernel == StreamKernel::Copy ? "copy" : "triad", threads_text(t)));
        const StreamPeak s = measure_stream(kernel, *pool, arrays, repeats);
        peaks.figures.push_back(stream_figure(s, t == 1 ? "_1t" : "_nt"));
        if (threads == 1) peaks.figures.push_back(stream_figure(s, "_nt"));
      }
  }

  const SimdLevel kernels_level = active_simd_level();
  const SimdLevel widest = cpu_simd_level();
  if (kernels_level != SimdLevel::Portable) peaks.cpu_kernel_simd = level_id(kernels_level);
  for (SimdLevel level : {SimdLevel::AVX512, SimdLevel::AVX2, SimdLevel::NEON}) {
    if (!simd_level_available(level)) continue;
    std::vector<int> counts = {1};
    if (threads > 1) counts.push_back(threads);
    for (int t : counts) {
      say(fmt::format("cpu: FMA peak, {}, {}", to_string(level), threads_text(t)));
      const FmaPeak p = measure_fma_peak(level, t, repeats);
      const auto figure = [&](bool all_threads) {
        return fma_figure(p, all_threads, level == kernels_level, level == widest);
      };
      peaks.figures.push_back(figure(t != 1));
      if (threads == 1) peaks.figures.push_back(figure(true));
    }
  }
  peaks.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return peaks;
}

}  // namespace cpu
