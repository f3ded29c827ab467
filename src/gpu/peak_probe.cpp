// The Vulkan device's peaks (peak_probe.hpp): copy bandwidth, FMA throughput, dispatch overheads.
#include "gpu/peak_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/error.hpp"
#include "core/measure.hpp"
#include "gpu/kernels.hpp"
#include "vk/buffer.hpp"
#include "vk/context.hpp"
#include "vk/error.hpp"
#include "vk/pipeline.hpp"

namespace gpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kFmaGroups = 1024;  // x 256 invocations (where allowed): about one full wave of a large GPU
constexpr uint32_t kFmaChains = 8;     // independent accumulators per invocation (peak_fma.comp)
constexpr double kFmaTargetMs = 25;    // each timed FMA dispatch lasts about this long
constexpr uint32_t kBackToBack = 256;  // empty dispatches per command buffer
constexpr int kLatencyRepeats = 21;    // round trips timed (cheap: the median of many)

// One command buffer recorded once and submitted as often as needed, with a fence.
class Submitter {
 public:
  explicit Submitter(vk::Context& ctx) : ctx_(ctx) {
    VkDevice dev = ctx.device();
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = ctx.command_pool();
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk::check(vkAllocateCommandBuffers(dev, &ai, &cmd_), "vkAllocateCommandBuffers");
    VkCommandPool pool = ctx.command_pool();
    cmd_owner_ =
        vk::Handle<VkCommandBuffer>(cmd_, [dev, pool](VkCommandBuffer c) { vkFreeCommandBuffers(dev, pool, 1, &c); });
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vk::check(vkCreateFence(dev, &fi, nullptr, &fence), "vkCreateFence");
    fence_ = vk::Handle<VkFence>(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });
  }

  void record(const std::function<void(VkCommandBuffer)>& fn) {
    vk::check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk::check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    fn(cmd_);
    vk::check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  }

  // Submits the recorded buffer and waits for its fence; returns the host seconds from before vkQueueSubmit to the
  // return of vkWaitForFences.
  double submit_and_wait() {
    VkFence fence = fence_.get();
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    const auto start = Clock::now();
    vk::check(vkQueueSubmit(ctx_.queue(), 1, &si, fence), "vkQueueSubmit (peaks)");
    vk::check(vkWaitForFences(ctx_.device(), 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences (peaks)");
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    vk::check(vkResetFences(ctx_.device(), 1, &fence), "vkResetFences");
    return seconds;
  }

 private:
  vk::Context& ctx_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  vk::Handle<VkCommandBuffer> cmd_owner_;
  vk::Handle<VkFence> fence_;
};

core::PeakFigure figure(std::string id, std::string label, std::string unit, std::vector<double> samples,
                        std::string method) {
  core::PeakFigure f;
  f.id = std::move(id);
  f.label = std::move(label);
  f.unit = std::move(unit);
  f.value = core::peak_of_repeats(samples, f.is_rate());
  f.samples = std::move(samples);
  f.method = std::move(method);
  return f;
}

// The device time between timestamps 0 and 1 of `recorded` work, ms, `repeats` times after one untimed run.
std::vector<double> timed_ms(vk::Context& ctx, Submitter& submitter, vk::TimestampQueries& queries, int repeats) {
  std::vector<double> ms;
  for (int r = 0; r <= repeats; ++r) {
    submitter.submit_and_wait();
    if (r > 0) ms.push_back(queries.read_ns(ctx, 2)[1] * 1e-6);
  }
  return ms;
}

// What the probes share: the device, one command buffer with its fence, two timestamp queries, the workgroup size,
// the repeats, the progress callback and the figures measured so far.
struct Probe {
  vk::Context& ctx;
  const vk::DeviceInfo& info;
  const vk::DeviceLimits& limits;
  Submitter& submitter;
  vk::TimestampQueries& queries;
  uint32_t local;  // the copy and FMA probes' workgroup: 256 invocations, or the device's most where fewer
  int repeats;
  const core::PeakProgress& progress;
  core::DevicePeaks& peaks;
  void say(const std::string& what) const {
    if (progress) progress(what);
  }
};

// Memory bandwidth: a copy shader, then vkCmdCopyBuffer, each over two buffers of kPeakCopyBytes.
void measure_bandwidth(Probe& p) {
  p.say(fmt::format("gpu: memory bandwidth, 2 buffers of {} MiB", kPeakCopyBytes >> 20));
  const VkDeviceSize bytes = kPeakCopyBytes;
  vk::Buffer src(p.ctx, bytes, vk::MemoryKind::DeviceLocal, "peak_copy_src");
  vk::Buffer dst(p.ctx, bytes, vk::MemoryKind::DeviceLocal, "peak_copy_dst");
  {
    // The copy shader binds at most maxStorageBufferRange bytes at once (128 MiB on lavapipe): one dispatch per
    // range, no barrier between them (they touch disjoint bytes).
    const VkDeviceSize align = std::max<VkDeviceSize>(256, p.limits.min_storage_buffer_offset_alignment);
    const VkDeviceSize range = std::min<VkDeviceSize>(bytes, p.limits.max_storage_buffer_range) / align * align;
    const std::array<uint32_t, 1> spec{p.local};
    vk::ComputePipeline copy(p.ctx, "peak_copy", 2, sizeof(uint32_t), {{p.local, 1, 1}, 0}, spec);
    const uint32_t ranges = static_cast<uint32_t>((bytes + range - 1) / range);
    vk::DescriptorPool pool(p.ctx, ranges, 2);
    std::vector<VkDescriptorSet> sets;
    std::vector<uint32_t> counts;
    for (VkDeviceSize offset = 0; offset < bytes; offset += range) {
      const VkDeviceSize length = std::min(range, bytes - offset);
      const vk::BufferRange r[2] = {{&src, offset, length}, {&dst, offset, length}};
      sets.push_back(pool.allocate(p.ctx, copy, r));
      counts.push_back(static_cast<uint32_t>(length / 16));
    }
    p.submitter.record([&](VkCommandBuffer cmd) {
      p.queries.reset(cmd);
      p.queries.write(cmd, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
      for (size_t i = 0; i < sets.size(); ++i) {
        const uint32_t most = std::min<uint32_t>(65535, p.limits.max_workgroup_count[0]);
        const uint32_t groups = std::clamp<uint32_t>(counts[i] / (p.local * 8), 1, most);  // ~8 vec4 per invocation
        vk::record_dispatch(cmd, copy, sets[i], &counts[i], groups);
      }
      p.queries.write(cmd, 1);
    });
    std::vector<double> gbps;
    for (double ms : timed_ms(p.ctx, p.submitter, p.queries, p.repeats))
      gbps.push_back(ms > 0 ? 2.0 * bytes / (ms * 1e6) : 0);
    p.peaks.figures.push_back(figure(
        "copy_shader", "memory bandwidth: copy shader", "GB/s", gbps,
        fmt::format("a compute shader copies one buffer of {} MiB into another, 16 bytes (a vec4) per access, each "
                    "invocation striding by the whole grid; (read + write bytes) / the time between timestamp "
                    "queries around the dispatches; the best of {} after one untimed run",
                    bytes >> 20, gbps.size())));

    p.submitter.record([&](VkCommandBuffer cmd) {
      p.queries.reset(cmd);
      p.queries.write(cmd, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
      const VkBufferCopy region{0, 0, bytes};
      vkCmdCopyBuffer(cmd, src.handle(), dst.handle(), 1, &region);
      p.queries.write(cmd, 1, VK_PIPELINE_STAGE_TRANSFER_BIT);
    });
    gbps.clear();
    for (double ms : timed_ms(p.ctx, p.submitter, p.queries, p.repeats))
      gbps.push_back(ms > 0 ? 2.0 * bytes / (ms * 1e6) : 0);
    p.peaks.figures.push_back(figure(
        "copy_transfer", "memory bandwidth: vkCmdCopyBuffer", "GB/s", gbps,
        fmt::format("vkCmdCopyBuffer of {} MiB (the driver's own copy, which may use a copy engine); (read + write "
                    "bytes) / the time between timestamp queries; the best of {} after one untimed run",
                    bytes >> 20, gbps.size())));
  }
}

// FMA throughput: scalar and vec4 fp32, and f16vec4 where the device has shaderFloat16; each dispatch calibrated to
// last about kFmaTargetMs. `sink` is the probes' one output; `pool` gives their descriptor sets.
void measure_fma(Probe& p, vk::Buffer& sink, vk::DescriptorPool& pool) {
  struct FmaVariant {
    const char* kernel;
    const char* id;
    const char* label;
    int lanes;
  };
  for (const FmaVariant& v : {FmaVariant{"peak_fma", "fma_fp32_scalar", "fp32 FMA: scalar", 1},
                              FmaVariant{"peak_fma_vec4", "fma_fp32_vec4", "fp32 FMA: vec4", 4},
                              FmaVariant{"peak_fma_fp16", "fma_fp16", "fp16 FMA: f16vec4", 4}}) {
    const bool fp16 = std::string(v.id) == "fma_fp16";
    if (fp16 && !p.info.shader_float16) {
      core::PeakFigure f = figure(v.id, v.label, "GFLOP/s", {}, "");
      f.note = "not measured: the device has no shaderFloat16";
      p.peaks.figures.push_back(std::move(f));
      continue;
    }
    p.say(fmt::format("gpu: {}", v.label));
    const std::array<uint32_t, 1> spec{p.local};
    vk::ComputePipeline fma(p.ctx, v.kernel, 1, 3 * sizeof(uint32_t), {{p.local, 1, 1}, 0}, spec);
    const vk::BufferRange r[1] = {{&sink}};
    VkDescriptorSet set = pool.allocate(p.ctx, fma, r);
    struct {
      uint32_t iterations;
      float m, c;
    } push{64, 0.999f, 0.001f};
    auto record = [&] {
      p.submitter.record([&](VkCommandBuffer cmd) {
        p.queries.reset(cmd);
        p.queries.write(cmd, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
        vk::record_dispatch(cmd, fma, set, &push, kFmaGroups);
        p.queries.write(cmd, 1);
      });
    };
    // Calibrate the iteration count so that a dispatch lasts about kFmaTargetMs.
    for (;;) {
      record();
      p.submitter.submit_and_wait();
      const double ms = p.queries.read_ns(p.ctx, 2)[1] * 1e-6;
      if (ms >= kFmaTargetMs / 4 || push.iterations >= (1u << 26)) {
        push.iterations = static_cast<uint32_t>(
            std::clamp(push.iterations * kFmaTargetMs / std::max(ms, 1e-3), 16.0, double(1u << 28)));
        break;
      }
      push.iterations *= 8;
    }
    record();
    const double flops = 2.0 * kFmaGroups * double(p.local) * push.iterations * kFmaChains * v.lanes;
    std::vector<double> gflops;
    for (double ms : timed_ms(p.ctx, p.submitter, p.queries, p.repeats))
      gflops.push_back(ms > 0 ? flops / (ms * 1e6) : 0);
    p.peaks.figures.push_back(
        figure(v.id, v.label, "GFLOP/s", gflops,
               fmt::format("{} x {} invocations, each {} independent chains acc = fma(acc, m, c) of {} for {} rounds, "
                           "nothing loaded or stored; an FMA counts 2 FLOP per lane; FLOP / the time between timestamp "
                           "queries; the best of {} after one untimed run",
                           kFmaGroups, p.local, kFmaChains,
                           fp16           ? "f16vec4"
                           : v.lanes == 4 ? "vec4"
                                          : "float",
                           push.iterations, gflops.size())));
  }
}

// Dispatch overheads: one empty dispatch's submit-and-wait round trip, and back-to-back empty dispatches.
void measure_dispatch(Probe& p, vk::Buffer& sink, vk::DescriptorPool& pool) {
  p.say("gpu: dispatch round trip and back-to-back dispatches");
  vk::ComputePipeline empty(p.ctx, "peak_empty", 1, 0, {});
  const vk::BufferRange r[1] = {{&sink}};
  VkDescriptorSet empty_set = pool.allocate(p.ctx, empty, r);
  p.submitter.record([&](VkCommandBuffer cmd) { vk::record_dispatch(cmd, empty, empty_set, nullptr, 1); });
  std::vector<double> round_trip;
  for (int i = 0; i < kLatencyRepeats + 2; ++i) {
    const double s = p.submitter.submit_and_wait();
    if (i >= 2) round_trip.push_back(s * 1e6);  // the first two warm the driver's paths
  }
  p.peaks.figures.push_back(
      figure("dispatch_round_trip", "dispatch round trip: submit + wait", "us", round_trip,
             fmt::format("one command buffer with one empty dispatch, submitted with a fence and waited for; host "
                         "steady-clock time from before vkQueueSubmit to the return of vkWaitForFences; median of {}",
                         round_trip.size())));

  p.submitter.record([&](VkCommandBuffer cmd) {
    p.queries.reset(cmd);
    p.queries.write(cmd, 0, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    for (uint32_t i = 0; i < kBackToBack; ++i) {
      vk::record_dispatch(cmd, empty, empty_set, nullptr, 1);
      // As between the kernels of a training step: each dispatch waits for the one before (no real hazard here).
      vk::compute_barrier(cmd);
    }
    p.queries.write(cmd, 1);
  });
  std::vector<double> per_dispatch;
  for (double ms : timed_ms(p.ctx, p.submitter, p.queries, p.repeats)) per_dispatch.push_back(ms * 1e3 / kBackToBack);
  p.peaks.figures.push_back(figure(
      "dispatch_back_to_back", "back-to-back dispatch, in one command buffer", "us", per_dispatch,
      fmt::format("{} empty dispatches in one command buffer, each followed by a compute-to-compute barrier as "
                  "between the kernels of a training step; the time between timestamp queries / {}; median of {}",
                  kBackToBack, kBackToBack, per_dispatch.size())));
}

}  // namespace

std::string gpu_peaks_key(const vk::DeviceInfo& device) {
  return core::gpu_peaks_key(device.uuid, device.driver_version);
}

core::DevicePeaks measure_gpu_peaks(int device_index, int repeats, const core::PeakProgress& progress) {
  const auto start = Clock::now();
  repeats = std::max(5, repeats);
  core::DevicePeaks peaks;
  peaks.load_average = core::load_average();
  peaks.measured_at = core::local_time_text();
  vk::Context ctx(vk::ContextOptions{device_index, false});
  const vk::DeviceInfo& info = ctx.info();
  peaks.backend = "gpu";
  peaks.key = gpu_peaks_key(info);
  peaks.device = vk::display_name(info);
  peaks.software = info.software;
  if (!info.timestamps || ctx.timestamp_valid_bits() == 0)
    throw core::Error(core::ErrorKind::Vulkan, "Vulkan: device " + info.name +
                                                   " has no timestamp queries on its compute queue, so its peaks "
                                                   "cannot be measured; choose another with --device");
  Submitter submitter(ctx);
  vk::TimestampQueries queries(ctx, 2);
  const vk::DeviceLimits& limits = ctx.limits();
  // The copy and FMA probes' workgroup: 256 invocations, or the device's most where fewer (specialization constant 0).
  const uint32_t local = workgroup_size(256, limits);

  Probe probe{ctx, info, limits, submitter, queries, local, repeats, progress, peaks};
  measure_bandwidth(probe);
  vk::Buffer sink(ctx, 16, vk::MemoryKind::DeviceLocal, "peak_sink");
  vk::DescriptorPool pool(ctx, 4, 1);
  measure_fma(probe, sink, pool);
  measure_dispatch(probe, sink, pool);

  peaks.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return peaks;
}

}  // namespace gpu
