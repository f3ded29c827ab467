// Split-K of matmul_backward_weight (gpu/gemm_config.hpp, choose_split_k): the rule that decides it, the slices it
// runs (core::with_split_k), and on the device: every slice summed exactly once (a reduce that drops, repeats or
// shifts a slice, or reads a partial no slice wrote, fails), the same bits on every run, and a trainer that splits
// holds the partials in its memory figures and trains like one that does not. The generic parity test
// (test_kernel_parity) runs the split variants on its odd shapes against the reference in every precision.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/dataset.hpp"
#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/model.hpp"
#include "core/rng.hpp"
#include "core/trainer.hpp"
#include "gpu/kernels.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"
#include "platform/process.hpp"
#include "vk/setup.hpp"

namespace {

using core::Precision;

core::PlanEntry backward_weight(long B, long C, long OC) {
  return {.op = core::Op::matmul_backward_weight, .layer = 0, .B = B, .C = C, .OC = OC};
}

// The value a binding of the storage type holds for x, as a double.
double stored(double x, Precision p) {
  if (p == Precision::FP16) return core::fp16_to_float(core::float_to_fp16(static_cast<float>(x)));
  if (p == Precision::BF16) return core::bf16_to_float(core::float_to_bf16(static_cast<float>(x)));
  return static_cast<float>(x);
}

std::vector<std::byte> encode(const std::vector<double>& v, Precision p) {
  std::vector<std::byte> out(std::max<size_t>(v.size() * core::storage_bytes(p), 16));
  for (size_t i = 0; i < v.size(); ++i) {
    if (p == Precision::FP32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const uint16_t h = p == Precision::FP16 ? core::float_to_fp16(float(v[i])) : core::float_to_bf16(float(v[i]));
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

std::vector<double> decode(const std::vector<std::byte>& bytes, size_t n, Precision p) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (p == Precision::FP32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      v[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      v[i] = p == Precision::FP16 ? core::fp16_to_float(h) : core::bf16_to_float(h);
    }
  }
  return v;
}

// dweight of entry e (as k splits it) from dout (B x OC) and inp (B x C); the partials start as NaN.
std::vector<double> run_backward_weight(vk::Context& ctx, const gpu::Kernels& k, const core::PlanEntry& e,
                                        const std::vector<double>& dout, const std::vector<double>& inp) {
  const Precision p = k.precision();
  auto upload = [&](const std::vector<double>& v, const char* name) {
    const std::vector<std::byte> bytes = encode(v, p);
    auto b = std::make_unique<vk::Buffer>(ctx, bytes.size(), vk::MemoryKind::DeviceLocal, name);
    b->upload(ctx, bytes.data(), bytes.size());
    return b;
  };
  const size_t outputs = size_t(e.OC * e.C);
  auto dweight = upload(std::vector<double>(outputs, 0.0), "dweight");
  auto d = upload(dout, "dout"), x = upload(inp, "inp");
  std::unique_ptr<vk::Buffer> partials;
  if (e.split_k > 1) {
    partials = std::make_unique<vk::Buffer>(ctx, gpu::split_k_partials_bytes(e), vk::MemoryKind::DeviceLocal,
                                            "split_k_partials");
    const std::vector<float> nan(partials->size() / sizeof(float), std::nanf(""));
    partials->upload(ctx, nan.data(), partials->size());
  }
  vk::DescriptorPool pool(ctx, 2, 3);
  const std::vector<vk::BufferRange> ranges{{dweight.get()}, {d.get()}, {x.get()}};
  const gpu::EntrySets sets = k.allocate_sets(pool, e, ranges, {partials.get()});
  const core::KernelArgs args = core::kernel_def(e.op).args(e, core::StepArgs{});
  ctx.run_one_shot([&](VkCommandBuffer cmd) { k.dispatch(cmd, e, sets, args); });
  std::vector<std::byte> bytes(dweight->size());
  dweight->download(ctx, bytes.data(), bytes.size());
  return decode(bytes, outputs, p);
}

// One hidden layer on the spiral, the validation layer on.
core::TrainConfig spiral_config(int hidden, int batch) {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.hidden = {hidden};
  cfg.batch = batch;
  cfg.readback_interval = 5;
  cfg.validation = true;
  return cfg;
}

}  // namespace

TEST_CASE("choose_split_k: split only where the unsplit dispatch leaves the device idle, slices of >= 64 rows") {
  vk::DeviceInfo gpu;
  gpu.type = "discrete GPU";
  REQUIRE(gpu::busy_workgroups(gpu) == 256);
  gpu::GemmConfig tiled;  // 64x64 tiles
  // The default model's output layer at batch 2048: 1 x 2 workgroups -> ceil(256 / 2) = 128, capped at 2048 / 64.
  CHECK(gpu::choose_split_k(tiled, backward_weight(2048, 128, 10), gpu) == 32);
  // seed-mlp's output layer (10 x 2048, batch 512): 32 workgroups -> 8 slices of 64 rows.
  CHECK(gpu::choose_split_k(tiled, backward_weight(512, 2048, 10), gpu) == 8);
  // Its hidden layers (2048 x 2048): 1024 workgroups fill the device.
  CHECK(gpu::choose_split_k(tiled, backward_weight(512, 2048, 2048), gpu) == 1);
  // A batch too short for two slices of 64 rows.
  CHECK(gpu::choose_split_k(tiled, backward_weight(127, 128, 10), gpu) == 1);
  CHECK(gpu::choose_split_k(tiled, backward_weight(128, 128, 10), gpu) == 2);
  // Only matmul_backward_weight splits.
  core::PlanEntry forward = backward_weight(2048, 128, 10);
  forward.op = core::Op::matmul_forward;
  CHECK(gpu::choose_split_k(tiled, forward, gpu) == 1);
  // The configuration's override: never, or n slices.
  gpu::GemmConfig never = tiled, five = tiled;
  never.split_k = 1;
  five.split_k = 5;
  CHECK(gpu::choose_split_k(never, backward_weight(2048, 128, 10), gpu) == 1);
  CHECK(gpu::choose_split_k(five, backward_weight(512, 2048, 2048), gpu) == 5);
  // Where the driver reports its compute units (an H100's 132 SMs): 2 workgroups each.
  vk::DeviceInfo h100 = gpu;
  h100.compute_units = 132;
  CHECK(gpu::busy_workgroups(h100) == 264);
  CHECK(gpu::choose_split_k(tiled, backward_weight(512, 2048, 10), h100) == 8);   // min(ceil(264 / 32), 512 / 64)
  CHECK(gpu::choose_split_k(tiled, backward_weight(2048, 1024, 100), h100) == 9);  // 2 x 16 workgroups: ceil(264 / 32)
  // An integrated GPU keeps fewer busy.
  vk::DeviceInfo igpu;
  igpu.type = "integrated GPU";
  CHECK(gpu::choose_split_k(tiled, backward_weight(2048, 128, 10), igpu) == 32);  // ceil(64 / 2), 32 slices
  CHECK(gpu::choose_split_k(tiled, backward_weight(512, 2048, 10), igpu) == 2);   // ceil(64 / 32)

  // A software device: its CPU threads. With 2, lavapipe's 4 workgroups of the 10 x 128 layer (texel 8x64) fill it.
  vk::DeviceInfo cpu;
  cpu.software = cpu.software_paths = true;
  gpu::GemmConfig texel;
  texel.path = gpu::GemmPath::Texel;
  texel.tiles = {8, 64, 4, 8, 8};
  const char* old = std::getenv("LP_NUM_THREADS");
  const std::string saved = old ? old : "";
  platform::set_env("LP_NUM_THREADS", "2");
  CHECK(gpu::busy_workgroups(cpu) == 2);
  CHECK(gpu::choose_split_k(texel, backward_weight(2048, 128, 10), cpu) == 1);
  platform::set_env("LP_NUM_THREADS", "16");
  CHECK(gpu::choose_split_k(texel, backward_weight(2048, 128, 10), cpu) == 4);
  if (old) platform::set_env("LP_NUM_THREADS", saved.c_str());
  else platform::unset_env("LP_NUM_THREADS");
}

TEST_CASE("split-K from a profile: no overflow, no slices past maxComputeWorkGroupCount, none with folded rows") {
  // Issue 34: computeUnits 4294967295 overflowed 2 x compute_units; TRAINSCOPE_SPLIT_K=2 with a profile of one
  // workgroup row reached "split-K with its rows folded into z", an internal error.
  vk::DeviceInfo huge;
  huge.type = "discrete GPU";
  huge.compute_units = 4294967295u;
  CHECK(gpu::busy_workgroups(huge) == 4294967295u);  // saturated, not 4294967294 by wrap-around
  huge.compute_units = 2147483648u;
  CHECK(gpu::busy_workgroups(huge) == 4294967295u);  // was 0
  gpu::GemmConfig tiled, forced = tiled;
  forced.split_k = 8;
  vk::DeviceInfo z4;
  z4.type = "discrete GPU";
  z4.limits.max_workgroup_count = {65535, 65535, 4};
  CHECK(gpu::choose_split_k(forced, backward_weight(2048, 128, 10), z4) == 4);
  CHECK(gpu::choose_split_k(tiled, backward_weight(2048, 128, 10), z4) == 4);  // 32 without the limit (above)
  // A convolution's backward weight whose OC rows fold into z (one workgroup row allowed): never split.
  core::PlanEntry conv{.op = core::Op::conv2d_backward_weight, .layer = 0, .B = 256, .C = 32, .OC = 64};
  conv.H = conv.W = 14;
  conv.KS = 3;
  conv.pad = 1;
  const gpu::GemmTiles small{16, 16, 8, 2, 2};  // 64 output channels: 4 tile rows
  vk::DeviceInfo rows1 = z4;
  rows1.limits.max_workgroup_count = {65535, 1, 65535};
  CHECK(gpu::choose_split_k(forced, small, conv, rows1) == 1);
  rows1.limits.max_workgroup_count = {65535, 4, 65535};  // the 4 rows fit along y: the forced split stays
  CHECK(gpu::choose_split_k(forced, small, conv, rows1) == 8);
}

TEST_CASE("with_split_k: aligned slices, none empty, and the figures count the partials' traffic") {
  struct Case {
    long B;
    uint32_t asked, split, rows;
  };
  for (const Case& c : {Case{37, 3, 3, 16}, Case{33, 3, 3, 16}, Case{7, 3, 1, 7}, Case{2048, 32, 32, 64},
                        Case{100, 64, 7, 16}, Case{260, 3, 3, 96}, Case{1000, 1, 1, 1000}}) {
    CAPTURE(c.B);
    CAPTURE(c.asked);
    const core::PlanEntry plain = core::with_split_k(backward_weight(c.B, 70, 10), 1, Precision::FP16);
    const core::PlanEntry e = core::with_split_k(plain, c.asked, Precision::FP16);
    CHECK(e.split_k == c.split);
    CHECK(e.k_slice() == c.rows);
    // Every slice holds rows: the last starts inside the batch, and together they cover it.
    CHECK((long(e.split_k) - 1) * e.k_slice() < c.B);
    CHECK(long(e.split_k) * e.k_slice() >= c.B);
    CHECK(core::kernel_def(e.op).args(e, {}).as<core::MatmulBackwardParams>().k_slice == uint32_t(e.k_slice()));
    // fp32 partials (split_k x OC x C) written once and read once; split_k - 1 additions per output.
    const double partials = e.split_k > 1 ? 4.0 * e.split_k * 10 * 70 : 0.0;
    CHECK(e.bytes_written - plain.bytes_written == partials);
    CHECK(e.bytes_read - plain.bytes_read == partials);
    CHECK(e.flops - plain.flops == (e.split_k > 1 ? (e.split_k - 1.0) * 10 * 70 : 0.0));
    CHECK(gpu::split_k_partials_bytes(e) == VkDeviceSize(partials));
  }
}

TEST_CASE("split-K on the device: every slice counted once, in every precision and on both GEMM paths") {
  auto ctx = test::make_context("split-K on the device");
  if (!ctx) return;
  const long C = 70, OC = 10;  // neither a multiple of a tile
  for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16}) {
    if (!gpu::precision_supported(ctx->info(), p)) continue;
    for (gpu::GemmConfig config : gpu::gemm_configs_to_test(*ctx, p)) {
      if (config.split_k <= 1) continue;  // the split configurations of both paths
      for (uint32_t slices : {2u, 3u, 5u, 8u}) {
        config.split_k = slices;
        const gpu::Kernels k(*ctx, config, p);
        for (long B : {37L, 100L, 130L}) {
          const core::PlanEntry e = k.with_split_k(backward_weight(B, C, OC));
          CAPTURE(core::to_string(p));
          CAPTURE(config.name());
          CAPTURE(e.label());
          REQUIRE(e.split_k > 1);
          // dout (b, o) = b + 1 and inp (b, c) = 1 + c % 3: dweight (o, c) = (1 + c % 3) B (B + 1) / 2, an integer
          // every partial sum holds exactly in fp32, rounded once to the storage type. A slice dropped, repeated or
          // shifted by whole slices changes the sum by at least one row of a slice; a partial no slice wrote is NaN.
          std::vector<double> dout(size_t(B * OC)), inp(size_t(B * C));
          for (long b = 0; b < B; ++b) {
            for (long o = 0; o < OC; ++o) dout[size_t(b * OC + o)] = double(b + 1);
            for (long c = 0; c < C; ++c) inp[size_t(b * C + c)] = double(1 + c % 3);
          }
          const std::vector<double> got = run_backward_weight(*ctx, k, e, dout, inp);
          size_t wrong = 0;
          for (long o = 0; o < OC; ++o)
            for (long c = 0; c < C; ++c) {
              const double want = stored(double(1 + c % 3) * double(B) * double(B + 1) / 2, p);
              const double g = got[size_t(o * C + c)];
              if (g != want && ++wrong <= 3) MESSAGE("dweight[" << o << "][" << c << "] = " << g << ", want " << want);
            }
          CHECK(wrong == 0);
        }
      }
    }
  }
  test::check_no_validation_messages(ctx->validation_log());
}

TEST_CASE("split-K gives the same bits on every run (the reduce adds the slices in a fixed order)") {
  auto ctx = test::make_context("split-K determinism");
  if (!ctx) return;
  gpu::GemmConfig config = gpu::choose_gemm_config(*ctx, Precision::FP32);
  config.split_k = 6;
  const gpu::Kernels k(*ctx, config, Precision::FP32);
  const core::PlanEntry e = k.with_split_k(backward_weight(333, 130, 10));
  REQUIRE(e.split_k == 6);
  core::Pcg32 rng(7);
  std::vector<double> dout(size_t(333 * 10)), inp(size_t(333 * 130));
  for (auto& v : dout) v = rng.uniform(-1.0f, 1.0f);
  for (auto& v : inp) v = rng.uniform(-1.0f, 1.0f);
  const std::vector<double> first = run_backward_weight(*ctx, k, e, dout, inp);
  for (int run = 0; run < 3; ++run) CHECK(run_backward_weight(*ctx, k, e, dout, inp) == first);
  test::check_no_validation_messages(ctx->validation_log());
}

TEST_CASE("a trainer that splits: the partials in its memory figures, one timed row per kernel, the same training") {
  if (!test::vulkan_device_or_skip("the GPU trainer with split-K")) return;
  const core::TrainConfig cfg = spiral_config(64, 200);
  const core::DataSplit data = core::make_spiral(3, 400, 50, 0.1f, 1);
  const std::vector<float> params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  const test::ValidationWatch validation;
  auto train = [&](const char* split) {
    platform::set_env("TRAINSCOPE_SPLIT_K", split);
    auto t = gpu::make_trainer(cfg, data, params);  // its own device cache: the kernels read the variable now
    platform::unset_env("TRAINSCOPE_SPLIT_K");
    return t;
  };
  auto plain = train("1");
  auto split = train("3");
  size_t partials = 0, split_entries = 0;
  for (const core::PlanEntry& e : split->plan().entries) {
    if (e.op != core::Op::matmul_backward_weight) continue;
    CHECK(e.split_k == 3);  // 200 rows: 3 slices of 80, 80, 40
    ++split_entries;
    partials = std::max(partials, size_t(gpu::split_k_partials_bytes(e)));
  }
  CHECK(split_entries == 2);
  for (const core::PlanEntry& e : plain->plan().entries) CHECK(e.split_k == 1);
  // The partials are a workspace buffer of their own, counted where every other buffer is.
  CHECK(split->memory_usage().workspace == plain->memory_usage().workspace + partials);
  CHECK(gpu::allocated_buffer_bytes(*split) == split->memory_usage().total());
  auto reference = [&](const core::Trainer& t) {
    return core::tensor_layout(t.plan(), {size_t(data.train.count), size_t(data.test.count), 5}).usage(true).workspace;
  };
  CHECK(reference(*split) == reference(*plain) + partials);

  // 10 steps each: one timestamp interval per plan entry, and losses that differ only by the order of the sums.
  std::vector<double> losses[2];
  core::Trainer* trainers[2] = {plain.get(), split.get()};
  for (int t = 0; t < 2; ++t) {
    trainers[t]->begin_epoch(core::epoch_order(data.train.count, cfg.seed, 0));
    for (size_t s = 0; s < 10; ++s) trainers[t]->step(s * size_t(cfg.batch) % 1000);
    for (const core::StepRecord& r : trainers[t]->flush()) {
      CHECK(r.kernel_ms.size() == trainers[t]->plan().entries.size());
      losses[t].push_back(r.loss);
    }
  }
  REQUIRE(losses[0].size() == 10);
  REQUIRE(losses[1].size() == 10);
  for (size_t s = 0; s < 10; ++s) CHECK(losses[1][s] == doctest::Approx(losses[0][s]).epsilon(1e-4));
  CHECK(losses[1].back() < losses[1].front());
}

TEST_CASE("the partials buffer is allocated like every other: a failed allocation refuses the trainer with its name") {
  if (!test::vulkan_device_or_skip("split-K's allocation failure")) return;
  const core::TrainConfig cfg = spiral_config(32, 128);
  const core::DataSplit data = core::make_spiral(3, 100, 20, 0.1f, 1);
  const std::vector<float> params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  platform::set_env("TRAINSCOPE_SPLIT_K", "2");
  gpu::DeviceCache cache;  // the kernels, made now, split into 2 slices
  const long before = vk::allocations_made();
  { auto t = gpu::make_trainer(cfg, data, params, &cache); }
  platform::unset_env("TRAINSCOPE_SPLIT_K");
  const long buffers = vk::allocations_made() - before;
  REQUIRE(buffers >= 3);
  // Each allocation of a new trainer in turn fails: one of them is the partials', refused with its name, no crash.
  int partials = 0;
  for (long k = 0; k < buffers; ++k) {
    vk::fail_allocation_after(k);
    try {
      auto t = gpu::make_trainer(cfg, data, params, &cache);
    } catch (const core::Error& e) {
      const std::string what = e.what();
      CHECK(what.find("out of GPU memory allocating") != std::string::npos);
      partials += what.find("split_k_partials") != std::string::npos;
    }
    vk::fail_allocation_after(-1);
  }
  CHECK(partials == 1);
}
