// The GPU rows of `trainscope bench` (see bench.hpp): the device's fp32 FMA peak measured with a probe shader, then
// the Vulkan GEMM kernels of every GEMM configuration worth showing, each dispatch timed with timestamp queries.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>

#include "app/bench.hpp"
#include "core/error.hpp"
#include "core/kernel_table.hpp"
#include "core/measure.hpp"
#include "gpu/gemm_config.hpp"
#include "gpu/kernels.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/pipeline.hpp"

namespace app {
namespace {

size_t sz(long n) { return static_cast<size_t>(n); }

// Milliseconds of one submission holding `record`, from the timestamps before and after it.
double time_ms(vk::Context& ctx, vk::TimestampQueries& queries, const std::function<void(VkCommandBuffer)>& record) {
  ctx.run_one_shot([&](VkCommandBuffer cmd) {
    queries.reset(cmd);
    queries.write(cmd, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    record(cmd);
    queries.write(cmd, 1);
  });
  return queries.read_ns(ctx, 2)[1] * 1e-6;
}

// `repeats` timed submissions of `record` (milliseconds each), after a warm-up: `record` back to back in one
// submission (a barrier between) for about kWarmUpMs of device time, or once where one takes longer. A GPU lowers its
// clocks while the host prepares the next case (fills and uploads its buffers): an NVIDIA H200 idles at 345 MHz and
// boosts to 1980 (the device tool's notes), and without this warm-up its 2048 squares measured 4.0 TFLOP/s here
// (7.5% of the FMA peak, 2026-11-29) while the same kernels ran 14-21 TFLOP/s in training's steady stream of steps.
constexpr double kWarmUpMs = 200;
std::vector<double> timed_samples(vk::Context& ctx, vk::TimestampQueries& queries,
                                  const std::function<void(VkCommandBuffer)>& record, int repeats) {
  const double once = time_ms(ctx, queries, record);
  if (once < kWarmUpMs) {
    const int n = static_cast<int>(std::min(10000.0, std::ceil(kWarmUpMs / std::max(once, 1e-3))));
    ctx.run_one_shot([&](VkCommandBuffer cmd) {
      for (int i = 0; i < n; ++i) {
        record(cmd);
        vk::compute_barrier(cmd);
      }
    });
  }
  std::vector<double> ms;
  while (static_cast<int>(ms.size()) < repeats) ms.push_back(time_ms(ctx, queries, record));
  return ms;
}

// The device's fp32 FMA rate in GFLOP/s with the probe of `trainscope peaks` (shaders/peaks/peak_fma.comp, its vec4
// variant: 8 independent vec4 chains per invocation, 2 FLOPs per fma and lane), its iteration count raised until one
// dispatch takes at least 30 ms, then the best of 3 dispatches (core::peak_of_repeats).
double measure_gpu_fma_peak(vk::Context& ctx) {
  struct Push {
    uint32_t iterations;
    float m, c;
  };
  const uint32_t workgroup = gpu::workgroup_size(256, ctx.limits());  // peak_fma.comp's local_size_x where allowed
  const std::array<uint32_t, 1> spec{workgroup};
  const vk::ComputePipeline pipeline(ctx, "peak_fma_vec4", 1, sizeof(Push), {{workgroup, 1, 1}, 0}, spec);
  constexpr uint32_t kFlopsPerIteration = 8 * 4 * 2;  // peak_fma.comp: chains x lanes
  const uint32_t groups = ctx.info().software ? 64 : 1024, invocations = groups * workgroup;
  const vk::Buffer out(ctx, 16, vk::MemoryKind::DeviceLocal, "peak_fma sink");
  vk::DescriptorPool pool(ctx, 1, 1);
  const vk::BufferRange range{&out};
  const VkDescriptorSet set = pool.allocate(ctx, pipeline, std::span(&range, 1));
  vk::TimestampQueries queries(ctx, 2);
  Push push{64, 0.999f, 1e-3f};  // peak_fma.comp: the chains converge to 1, never overflow or turn denormal
  auto run = [&] {
    return time_ms(ctx, queries, [&](VkCommandBuffer cmd) { vk::record_dispatch(cmd, pipeline, set, &push, groups, 1); });
  };
  double ms = run();
  while (ms < 30 && push.iterations < (1u << 26)) {
    push.iterations *= ms < 3 ? 8 : 2;
    ms = run();
  }
  const double flops = double(kFlopsPerIteration) * double(invocations) * push.iterations;
  std::vector<double> gflops;
  for (double t : {ms, run(), run()}) gflops.push_back(flops / (t * 1e-3) / 1e9);
  return core::peak_of_repeats(gflops, true);
}

// The configurations to run: the device's default, and the other path where the device can run it.
std::vector<gpu::GemmConfig> bench_configs(const vk::Device& dev) {
  const gpu::GemmConfig chosen = gpu::choose_gemm_config(dev, core::Precision::FP32);
  std::vector<gpu::GemmConfig> out{chosen};
  for (const gpu::GemmConfig& c : gpu::gemm_configs_to_test(dev, core::Precision::FP32))
    if (c.path != chosen.path && c.vector_loads) {
      out.push_back(c);
      break;
    }
  return out;
}

// The split-K row of backward_weight entry `entry` beside its unsplit row `unsplit` (same kernels, same buffers r):
// the slices choose_split_k picks here, or kBenchSplitK where it picks none; nothing where K is too short to split.
std::optional<BenchRow> split_k_row(vk::Context& ctx, const gpu::Kernels& k, vk::DescriptorPool& pool,
                                    vk::TimestampQueries& queries, const core::PlanEntry& entry,
                                    const std::vector<vk::BufferRange>& r, int repeats, const BenchRow& unsplit) {
  const uint32_t chosen = gpu::choose_split_k(k.gemm_config(), entry, ctx.info());
  const bool forced = chosen <= 1;
  const core::PlanEntry e = core::with_split_k(entry, forced ? kBenchSplitK : chosen, core::Precision::FP32);
  if (e.split_k <= 1) return std::nullopt;
  const vk::Buffer partials(ctx, gpu::split_k_partials_bytes(e), vk::MemoryKind::DeviceLocal, "bench split-K partials");
  const gpu::EntrySets sets = k.allocate_sets(pool, e, r, {&partials});
  const core::KernelArgs args = core::kernel_def(e.op).args(e, core::StepArgs{});
  // One interval around both dispatches: the GEMM pass and the reduce.
  const std::vector<double> ms =
      timed_samples(ctx, queries, [&](VkCommandBuffer cmd) { k.dispatch(cmd, e, sets, args); }, repeats);
  BenchRow row = unsplit;
  row.ms = core::median(ms);
  row.gflops = unsplit.gemm.flops() / (row.ms * 1e-3) / 1e9;  // the GEMM's FLOPs: the reduce's additions not counted
  row.split_k = e.split_k;
  row.unsplit_ms = unsplit.ms;
  row.kernel += fmt::format(", split-K {} x {} rows + reduce{}: {:.2f}x the speed of the row above", e.split_k,
                            e.k_slice(), forced ? " (forced: this device would not split)" : "", unsplit.ms / row.ms);
  return row;
}

}  // namespace

std::vector<BenchRow> bench_gpu(const std::vector<GemmCase>& cases, int device, int repeats) {
  vk::Context ctx(vk::ContextOptions{device, false});
  if (!ctx.info().timestamps)
    throw core::Error(core::ErrorKind::Vulkan, fmt::format("{} has no timestamp queries on its compute queue",
                                                           ctx.info().name));
  const std::string device_name = ctx.info().name + (ctx.info().software ? " [software Vulkan: runs on the CPU]" : "");
  bench_progress("gpu FMA peak", 0, 1);
  const double peak = measure_gpu_fma_peak(ctx);
  bench_progress("gpu FMA peak", 1, 1);
  const std::vector<gpu::GemmConfig> configs = bench_configs(ctx);
  std::vector<std::unique_ptr<gpu::Kernels>> kernels;
  for (const gpu::GemmConfig& c : configs) kernels.push_back(std::make_unique<gpu::Kernels>(ctx, c));
  // A set per case and configuration, and the split-K row's two.
  vk::DescriptorPool pool(ctx, static_cast<uint32_t>(cases.size() * (configs.size() + 2)), 5);
  vk::TimestampQueries queries(ctx, 2);
  std::vector<BenchRow> rows;
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& g = cases[i];
    bench_progress("gpu", i, cases.size());
    auto buffer = [&](size_t n, uint64_t seed, const char* name) {
      vk::Buffer b(ctx, std::max<size_t>(n * 4, 16), vk::MemoryKind::DeviceLocal, name);
      const auto v = random_floats(n, seed);
      b.upload(ctx, v.data(), n * 4);
      return b;
    };
    const vk::Buffer x = buffer(sz(g.B * g.C), 1, "bench inp"), w = buffer(sz(g.OC * g.C), 2, "bench weight");
    const vk::Buffer d = buffer(sz(g.B * g.OC), 3, "bench dout"), bias = buffer(sz(g.OC), 4, "bench bias");
    const vk::Buffer out = buffer(sz(g.M() * g.N()), 5, "bench out"), pre = buffer(sz(g.B * g.OC), 6, "bench preact");
    // The kernel's bindings in the kernel table's order (core/kernel_table.hpp), a plain affine forward pass.
    const core::Op op = g.form == "forward"         ? core::Op::matmul_forward
                        : g.form == "backward_data" ? core::Op::matmul_backward_data
                                                    : core::Op::matmul_backward_weight;
    std::vector<vk::BufferRange> r;
    if (op == core::Op::matmul_forward) r = {{&out}, {&pre}, {&x}, {&w}, {&bias}};
    else if (op == core::Op::matmul_backward_data) r = {{&out}, {&d}, {&w}};
    else r = {{&out}, {&d}, {&x}};
    const core::PlanEntry entry{.op = op, .B = g.B, .C = g.C, .OC = g.OC};
    const core::KernelArgs args = core::kernel_def(op).args(entry, core::StepArgs{});
    // The other path only at the model's shapes and small squares: on a software device the tiled path runs at a
    // few GFLOP/s, and a 2048 square would take minutes.
    const bool all_configs = g.label.rfind("square", 0) != 0 || g.M() * g.N() * g.K() <= 512L * 512 * 512;
    for (size_t c = 0; c < configs.size() && (c == 0 || all_configs); ++c) {
      const gpu::Kernels& k = *kernels[c];
      const VkDescriptorSet set = pool.allocate(ctx, k.pipeline(entry), r);
      const std::vector<double> ms =
          timed_samples(ctx, queries, [&](VkCommandBuffer cmd) { k.dispatch(cmd, entry, set, args); }, repeats);
      const gpu::GemmVariant v = k.gemm_variant(entry);
      gpu::GemmConfig shown = configs[c];
      shown.split_k = 0;  // the rows name their split themselves
      BenchRow row;
      row.backend = "gpu";
      row.device = device_name;
      row.kernel = fmt::format("{}{} [{}]", gpu::to_string(v.path), v.vec4 ? "/vec4" : "/scalar", shown.name());
      row.gemm = g;
      row.ms = core::median(ms);
      row.gflops = g.flops() / (row.ms * 1e-3) / 1e9;
      row.peak_gflops = peak;
      rows.push_back(row);
      if (c == 0 && op == core::Op::matmul_backward_weight && g.label.rfind("square", 0) != 0)
        if (auto split = split_k_row(ctx, k, pool, queries, entry, r, repeats, row)) rows.push_back(std::move(*split));
    }
  }
  bench_progress("gpu", cases.size(), cases.size());
  return rows;
}

}  // namespace app
