// Device limits in one place (vk/limits.hpp) and device profiles: the built-in profiles and JSON files, clamping that
// only ever lowers, the timestamp wrap-around undone, the refusals before training (gpu::device_fit_problem), and on
// the Vulkan device: a profile's limits in force (workgroup sizes, the GEMM path and split-K of a GPU), a dataset past
// maxStorageBufferRange gathered in chunks against the plain reference, and buffers and bindings past a limit refused
// with a message naming it. The parity and training tests also run whole under each profile (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/kernel_table.hpp"
#include "core/rng.hpp"
#include "cpu/kernel_calls.hpp"
#include "gpu/device_fit.hpp"
#include "gpu/gemm_config.hpp"
#include "gpu/kernels.hpp"
#include "gpu_test_util.hpp"
#include "vk/limits.hpp"

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A device as lavapipe describes itself, for the pure functions.
vk::DeviceInfo lavapipe_like() {
  vk::DeviceInfo d;
  d.name = "lavapipe";
  d.software = d.software_paths = true;
  vk::DeviceLimits& l = d.limits;
  l.max_storage_buffer_range = 128 * kMiB;
  l.max_memory_allocation_size = 2048 * kMiB;
  l.max_buffer_size = 4096 * kMiB - 1;
  l.device_local_heap = 2048 * kMiB;
  l.max_texel_buffer_elements = 128 * kMiB;
  l.min_storage_buffer_offset_alignment = 16;
  l.min_texel_buffer_offset_alignment = 16;
  l.max_push_constants_size = 128;
  l.max_per_stage_storage_buffers = 1u << 20;
  l.max_per_stage_sampled_images = 1u << 20;
  l.max_shared_memory = 32768;
  l.max_workgroup_invocations = 1024;
  l.max_workgroup_size = {1024, 1024, 1024};
  l.max_workgroup_count = {65535, 65535, 65535};
  l.timestamp_period_ns = 1;
  l.timestamp_valid_bits = 64;
  l.timestamp_compute_and_graphics = true;
  return vk::with_profile(d, std::nullopt);
}

// Fashion-MNIST's dimensions (no samples: the checks read the sizes only).
core::DataSplit fashion_mnist_sizes(int train = 60000) {
  core::DataSplit d;
  d.train.count = train;
  d.test.count = 10000;
  d.train.features = d.test.features = 784;
  d.train.classes = d.test.classes = 10;
  return d;
}

}  // namespace

TEST_CASE("device profiles: spec-min and desktop-discrete, and clamping only ever lowers a limit") {
  const auto spec = vk::builtin_profile("spec-min");
  REQUIRE(spec);
  const vk::DeviceInfo lp = lavapipe_like();
  const vk::DeviceInfo min = vk::with_profile(lp, spec);
  CHECK(min.profile == "spec-min");
  CHECK(min.limits.max_storage_buffer_range == 128 * kMiB);
  CHECK(min.limits.max_shared_memory == 16384);
  CHECK(min.limits.max_workgroup_invocations == 128);
  CHECK(min.limits.max_workgroup_size == std::array<uint32_t, 3>{128, 128, 64});
  CHECK(min.limits.max_texel_buffer_elements == 65536);
  CHECK(min.limits.max_memory_allocation_size == 1024 * kMiB);
  CHECK(min.limits.min_storage_buffer_offset_alignment == 256);  // an alignment only ever rises
  CHECK(min.limits.timestamp_valid_bits == 36);
  CHECK(min.limits.timestamps_near_wrap);
  CHECK(min.max_workgroup_invocations == 128);
  CHECK(min.software_paths);  // spec-min leaves the code paths alone

  const auto desktop = vk::builtin_profile("desktop-discrete");
  REQUIRE(desktop);
  const vk::DeviceInfo gpu = vk::with_profile(lp, desktop);
  CHECK(gpu.software);         // still labelled what it is
  CHECK_FALSE(gpu.software_paths);  // but takes a GPU's paths
  CHECK(gpu.compute_units == 64);
  CHECK(gpu::busy_workgroups(gpu) == 128);
  // Limits above lavapipe's stay lavapipe's: the profile never raises one.
  CHECK(gpu.limits.max_storage_buffer_range == 128 * kMiB);
  CHECK(gpu.limits.max_shared_memory == 32768);
  CHECK(vk::display_name(gpu) == "lavapipe [software Vulkan: runs on the CPU] [device profile desktop-discrete]");
  CHECK_FALSE(vk::builtin_profile("spec-max"));
}

TEST_CASE("a JSON device profile: Vulkan's limit names, and one clear line for what is wrong") {
  const vk::DeviceProfile p = vk::parse_profile(
      R"({"name": "tiny", "maxStorageBufferRange": 4096, "maxComputeWorkGroupCount": [16, 8, 1],
          "software": false, "computeUnits": 12, "timestampValidBits": 0, "storageBuffer16BitAccess": false})",
      "tiny.json");
  CHECK(p.name == "tiny");
  CHECK(p.limits.max_storage_buffer_range == 4096);
  CHECK(p.limits.max_workgroup_count == std::array<uint32_t, 3>{16, 8, 1});
  CHECK(p.no_timestamps);
  const vk::DeviceInfo d = vk::with_profile(lavapipe_like(), p);
  CHECK(d.limits.max_storage_buffer_range == 4096);
  CHECK(d.limits.max_workgroup_count == std::array<uint32_t, 3>{16, 8, 1});
  CHECK_FALSE(d.timestamps);  // a device without timestamps on its compute queue
  CHECK_FALSE(d.storage_16bit);
  CHECK(d.compute_units == 12);
  CHECK(vk::parse_profile("{}", "empty.json").name == "empty.json");

  auto error = [](const std::string& json) {
    try {
      vk::parse_profile(json, "p.json");
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("[1]") == "TRAINSCOPE_DEVICE_PROFILE: p.json must hold one JSON object of limits, e.g. "
                        "{\"maxStorageBufferRange\": 134217728}");
  CHECK(error(R"({"maxStorageBufferRange": -1})") ==
        "TRAINSCOPE_DEVICE_PROFILE: p.json: \"maxStorageBufferRange\" must be a whole number from 0 to "
        "18446744073709551615");
  CHECK(error(R"({"maxComputeSharedMemorySize": 1e12})").find("must be a whole number from 0 to 4294967295") !=
        std::string::npos);
  // Vulkan allows 0 or 36..64 timestamp bits; 1 bit gave negative kernel shares and millions of GFLOP/s.
  for (const char* bits : {"1", "35", "65"})
    CHECK(error(std::string(R"({"timestampValidBits": )") + bits + "}") ==
          std::string("TRAINSCOPE_DEVICE_PROFILE: p.json: \"timestampValidBits\" ") + bits +
              " is not a value Vulkan allows: 0 (no timestamps) or 36..64");
  for (const char* bits : {"0", "36", "64"})
    CHECK(error(std::string(R"({"timestampValidBits": )") + bits + "}") == "no error");
  CHECK(error(R"({"software": 1})") == "TRAINSCOPE_DEVICE_PROFILE: p.json: \"software\" must be true or false");
  CHECK(error(R"({"maxStorageRange": 1})").find("unknown key \"maxStorageRange\"") != std::string::npos);
  CHECK(error("{").find("is not valid JSON") != std::string::npos);
  // A key given twice: refused with the lessons' words (issue 34: the last one was taken, silently).
  CHECK(error(R"({"maxStorageBufferRange": 4096, "maxStorageBufferRange": 134217728})") ==
        "TRAINSCOPE_DEVICE_PROFILE: p.json: \"maxStorageBufferRange\" is given twice in one object; give each key "
        "once");
}

TEST_CASE("timestamps: the counter's wrap-around undone, also across pauses longer than one wrap") {
  const uint32_t bits = 36;
  const uint64_t wrap = uint64_t{1} << bits;
  // 1 ns per tick: the 36-bit counter wraps every 68.7 s.
  const uint64_t start = wrap - 500'000'000;  // 0.5 s before the wrap
  uint64_t t = vk::unwrap_timestamp(start, bits, 1.0, std::nullopt, 0);
  CHECK(t == start);
  const uint64_t later = (start + 800'000'000) & (wrap - 1);  // 0.8 s later, past the wrap
  CHECK(later < start);
  t = vk::unwrap_timestamp(later, bits, 1.0, t, 0.8);
  CHECK(t == start + 800'000'000);
  // A pause of 3.5 wrap periods: the host's clock says how many wraps went by.
  const double pause_s = 3.5 * static_cast<double>(wrap) * 1e-9;
  const uint64_t after_pause = (start + 800'000'000 + uint64_t(3.5 * double(wrap))) & (wrap - 1);
  CHECK(vk::unwrap_timestamp(after_pause, bits, 1.0, t, pause_s) == start + 800'000'000 + uint64_t(3.5 * double(wrap)));
  // Readings a moment apart on the host that differ by less than a wrap: no wrap added.
  CHECK(vk::unwrap_timestamp(5, bits, 1.0, uint64_t{3}, 0) == 5);
  CHECK(vk::unwrap_timestamp(123, 64, 1.0, uint64_t{3}, 100) == 123);  // 64 bits never wrap in practice
}

TEST_CASE("a model or batch past a device limit is refused before training, naming the limit and what to change") {
  const vk::DeviceInfo lp = lavapipe_like();
  core::TrainConfig cfg;
  cfg.batch = 60000;
  cfg.hidden = {18000};
  // 60000 x 18000 fp32 = 4.32 GB of activations, past lavapipe's 128 MiB.
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(), lp) ==
        "--batch 60000 needs a 4.32 GB buffer for layer 1's activations (60000 x 18000 fp32); lavapipe binds at most "
        "134 MB of a buffer (maxStorageBufferRange): use --batch <= 1864, or smaller --hidden sizes");
  // The same on a desktop GPU's 4 GiB.
  vk::DeviceInfo big = lp;
  big.limits.max_storage_buffer_range = 4 * 1024 * kMiB - 1;
  big.limits.device_local_heap = 64 * 1024 * kMiB;
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(), big).find("use --batch <= 59652") != std::string::npos);
  cfg.batch = 59652;
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(), big) == "");

  // The parameters: the optimizer binds the fp32 masters whole.
  cfg.batch = 128;
  cfg.hidden = {8192, 8192};  // 784 x 8192 + 8192 x 8192 + 8192 x 10 = 73.6 M parameters
  const std::string params = gpu::device_fit_problem(cfg, fashion_mnist_sizes(), lp);
  CHECK(params.rfind("this model's 73.6 million parameters need a 295 MB buffer for the fp32 master weights", 0) == 0);
  CHECK(params.find("use smaller --hidden sizes (at most about 33.6 million parameters)") != std::string::npos);

  // The dataset is bound in chunks: only its size as one allocation counts (spec-min: 1 GiB).
  const vk::DeviceInfo min = vk::with_profile(lp, vk::builtin_profile("spec-min"));
  cfg.hidden = {16};
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(), min) == "");  // 188 MB of samples: fine
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(400000), min) ==
        "the training set needs a 1.25 GB buffer (400000 samples x 784 fp32 values); lavapipe allocates at most 1.07 "
        "GB at once (maxBufferSize): use --limit <= 342392");

  // Everything together against the memory heap.
  vk::DeviceInfo small = big;
  small.limits.device_local_heap = 512 * kMiB;
  cfg.hidden = {4096, 4096};
  cfg.batch = 8192;
  const std::string heap = gpu::device_fit_problem(cfg, fashion_mnist_sizes(), small);
  CHECK(heap.rfind("this run needs ", 0) == 0);
  CHECK(heap.find("the largest memory heap of lavapipe holds 537 MB: use a smaller --batch or smaller --hidden sizes") !=
        std::string::npos);

  // Too few storage buffers per shader stage (the spec's minimum, 4): no setting helps.
  vk::DeviceInfo four = lp;
  four.limits.max_per_stage_storage_buffers = 4;
  cfg = core::TrainConfig{};
  CHECK(gpu::device_fit_problem(cfg, fashion_mnist_sizes(), four) ==
        "gather_batch binds 5 storage buffers in fp32; lavapipe allows 4 per shader stage "
        "(maxPerStageDescriptorStorageBuffers): no setting changes that; choose another --device");
}

TEST_CASE("each refusal of a device limit names a setting that fixes it, or says that none does") {
  // Issue 34: "use --limit <= 0" for a row past maxMemoryAllocationSize; "smaller --hidden sizes" for the input, a
  // CNN's convolutions and push constants; the host input's staging ring refused mid-run, advising --batch.
  const vk::DeviceInfo lp = lavapipe_like();
  core::DataSplit images = fashion_mnist_sizes();
  images.train.height = images.test.height = images.train.width = images.test.width = 28;
  images.train.channels = images.test.channels = 1;
  core::TrainConfig cnn;
  cnn.model = core::ModelKind::CNN;
  cnn.conv = {32, 64};
  cnn.hidden = {128};
  cnn.batch = 2048;  // conv 1's 2048 x 28 x 28 x 32 fp32 activations: 206 MB
  std::string why = gpu::device_fit_problem(cnn, images, lp);
  CHECK(why.rfind("--batch 2048 needs a ", 0) == 0);
  CHECK(why.find("use --batch <= ") != std::string::npos);
  CHECK(why.find(", or fewer --conv channels") != std::string::npos);
  CHECK(why.find("--hidden") == std::string::npos);
  vk::DeviceInfo tiny = lp;
  tiny.limits.max_storage_buffer_range = 64 * 1024;  // less than one image's 64 channels (200 kB)
  cnn.batch = 1;
  cnn.conv = {64};
  cnn.hidden = {1};  // 13.3 thousand parameters: 53 kB, within the range
  core::DataSplit few = images;  // its labels are bound whole: 4 kB
  few.train.count = few.test.count = 1000;
  why = gpu::device_fit_problem(cnn, few, tiny);
  INFO(why);
  CHECK(why.rfind("one sample needs ", 0) == 0);
  CHECK(why.find("use fewer --conv channels") != std::string::npos);

  // The input itself: no layer size changes it.
  core::TrainConfig mlp;
  mlp.hidden = {1};
  mlp.batch = 128;
  tiny.limits.max_storage_buffer_range = 1000;  // less than one 784-pixel row (3136 bytes)
  why = gpu::device_fit_problem(mlp, fashion_mnist_sizes(), tiny);
  CHECK(why.find("for the batch input") != std::string::npos);
  CHECK(why.find("this device cannot take this dataset's samples; choose another --device") != std::string::npos);
  CHECK(why.find("--hidden") == std::string::npos);

  // One sample past maxMemoryAllocationSize: no --limit helps.
  vk::DeviceInfo alloc = lp;
  alloc.limits.max_memory_allocation_size = 1000;
  CHECK(gpu::device_fit_problem(mlp, fashion_mnist_sizes(), alloc) ==
        "one sample of the training set (784 fp32 values, 3.14 kB) is more than lavapipe allocates at once "
        "(maxMemoryAllocationSize 1 kB): this device cannot hold this dataset; choose another --device");

  // Push constants: a kernel's, whatever the sizes.
  vk::DeviceInfo push = lp;
  push.limits.max_push_constants_size = 16;
  why = gpu::device_fit_problem(mlp, fashion_mnist_sizes(), push);
  CHECK(why.find("bytes of push constants; lavapipe allows 16 (maxPushConstantsSize): no setting changes that; "
                 "choose another --device") != std::string::npos);

  // --input host: the staging ring holds --readback batches in one buffer (spec-min: 1 GiB).
  const vk::DeviceInfo min = vk::with_profile(lp, vk::builtin_profile("spec-min"));
  mlp.input.source = core::InputSource::Host;
  mlp.batch = 512;
  mlp.readback_interval = 1000;  // 1000 x (512 x 784 x 4 + 512 x 4) bytes = 1.61 GB
  CHECK(gpu::device_fit_problem(mlp, fashion_mnist_sizes(), min) ==
        "--input host stages --readback 1000 batches at once, a 1.61 GB buffer (1000 x 1.61 MB for --batch 512); "
        "lavapipe allocates at most 1.07 GB at once (maxBufferSize): use --readback <= 667, or --pageable (one batch "
        "at a time)");
  mlp.readback_interval = 667;
  CHECK(gpu::device_fit_problem(mlp, fashion_mnist_sizes(), min) == "");
  mlp.readback_interval = 1000;
  mlp.input.pageable = true;  // one batch at a time
  CHECK(gpu::device_fit_problem(mlp, fashion_mnist_sizes(), min) == "");
}

TEST_CASE("on the Vulkan device: a profile's limits are what the kernels run with") {
  if (!test::vulkan_device_or_skip("device profiles on the device")) return;
  vk::Context min(vk::ContextOptions{-1, true}, vk::builtin_profile("spec-min"));
  CHECK(min.info().profile == "spec-min");
  CHECK(min.limits().max_workgroup_invocations <= 128);
  CHECK(gpu::workgroup_size(core::kernel_def(core::Op::adamw_update), min.limits()) <= 128);
  CHECK(gpu::workgroup_size(core::kernel_def(core::Op::loss_reduce), min.limits()) <= 128);
  for (const gpu::GemmConfig& g : gpu::gemm_configs_to_test(min, core::Precision::FP32))
    CHECK(g.tiles.shared_bytes() <= 16384);

  vk::Context desktop(vk::ContextOptions{-1, true}, vk::builtin_profile("desktop-discrete"));
  CHECK_FALSE(desktop.info().software_paths);
  const gpu::GemmConfig g = gpu::choose_gemm_config(desktop, core::Precision::FP32);
  CHECK(g.path == gpu::GemmPath::Tiled);
  // The output layer's weight gradient of the default model at batch 512: split as on a GPU with 64 compute units.
  core::PlanEntry e{.op = core::Op::matmul_backward_weight, .B = 512, .C = 128, .OC = 10};
  CHECK(gpu::choose_split_k(g, e, desktop.info()) > 1);
  test::check_no_validation_messages(min.validation_log());
  test::check_no_validation_messages(desktop.validation_log());
}

TEST_CASE("a dataset past maxStorageBufferRange is gathered chunk by chunk, exactly as the plain reference") {
  if (!test::vulkan_device_or_skip("the chunked gather")) return;
  // A device that binds 4 KiB: a 400-row dataset of 13 or 100 features takes 6 to 10 bindings.
  vk::DeviceProfile tiny = vk::parse_profile(R"({"maxStorageBufferRange": 4096})", "tiny.json");
  vk::Context ctx(vk::ContextOptions{-1, true}, tiny);
  for (core::Precision p : {core::Precision::FP32, core::Precision::FP16}) {
    if (!gpu::precision_supported(ctx.info(), p)) continue;
    const gpu::Kernels kernels(ctx, std::nullopt, p);
    for (long C : {13L, 100L}) {
      CAPTURE(C);
      const long N = 400, B = 8;
      const uint32_t first = 5;
      core::Pcg32 rng(7);
      std::vector<double> x(static_cast<size_t>(N * C)), y(static_cast<size_t>(N)), order(first + static_cast<size_t>(B));
      for (auto& v : x) v = rng.uniform(-1, 1);
      for (auto& v : y) v = rng.next_u32() % 10;
      // Rows from the first, the last and the middle chunks.
      for (size_t i = 0; i < order.size(); ++i) order[i] = double((i * 157 + 3) % size_t(N));
      order[first] = 0;
      order[first + 1] = double(N - 1);
      const core::PlanEntry e{.op = core::Op::gather_batch, .B = B, .C = C};
      core::StepArgs step;
      step.first = first;
      const core::KernelArgs args = core::kernel_def(e.op).args(e, step);
      std::vector<std::vector<double>> ref{std::vector<double>(size_t(B * C)), std::vector<double>(size_t(B)), x, y,
                                           order};
      cpu::run_reference(e, step, ref, p);

      std::vector<float> xf(x.begin(), x.end());
      std::vector<int32_t> yi(y.begin(), y.end());
      std::vector<uint32_t> oi(order.begin(), order.end());
      const size_t e_bytes = core::storage_bytes(p);
      vk::Buffer x_out(ctx, std::max<size_t>(size_t(B * C) * e_bytes, 16), vk::MemoryKind::DeviceLocal, "x_out");
      vk::Buffer y_out(ctx, size_t(B) * 4, vk::MemoryKind::DeviceLocal, "y_out");
      vk::Buffer xb = test::to_buffer(ctx, xf, "x_train"), yb = test::to_buffer(ctx, yi, "y_train"),
                 ob = test::to_buffer(ctx, oi, "order");
      const std::vector<vk::BufferRange> ranges{{&x_out}, {&y_out}, {&xb}, {&yb}, {&ob}};
      const uint32_t chunks = gpu::data_chunks(uint64_t(N), uint64_t(C) * 4, ctx.limits());
      CHECK(chunks >= 6);
      vk::DescriptorPool pool(ctx, chunks, 5);
      const gpu::EntrySets sets = kernels.allocate_sets(pool, e, ranges);
      CHECK(sets.chunks.size() == chunks);
      ctx.run_one_shot([&](VkCommandBuffer cmd) { kernels.dispatch(cmd, e, sets, args); });

      std::vector<int32_t> got_y = test::from_buffer<int32_t>(ctx, y_out, size_t(B));
      std::vector<unsigned char> got_x(size_t(B * C) * e_bytes);
      x_out.download(ctx, got_x.data(), got_x.size());
      size_t wrong = 0;
      for (long i = 0; i < B * C; ++i) {
        float v = 0;
        if (p == core::Precision::FP32) std::memcpy(&v, got_x.data() + i * 4, 4);
        else v = core::fp16_to_float(uint16_t(got_x[size_t(i) * 2] | got_x[size_t(i) * 2 + 1] << 8));
        const float want = p == core::Precision::FP32 ? static_cast<float>(ref[0][size_t(i)])
                                                      : core::fp16_to_float(core::float_to_fp16(float(ref[0][size_t(i)])));
        wrong += v != want;
      }
      CHECK(wrong == 0);  // a copy: every value the nearest of the reference's
      for (long b = 0; b < B; ++b) CHECK(got_y[size_t(b)] == static_cast<int32_t>(ref[1][size_t(b)]));
    }
  }
  test::check_no_validation_messages(ctx.validation_log());
}

TEST_CASE("a buffer, a binding or a dispatch past a device limit is refused, naming the limit") {
  if (!test::vulkan_device_or_skip("the limit checks")) return;
  vk::Context ctx(vk::ContextOptions{-1, true},
                  vk::parse_profile(R"({"maxBufferSize": 1048576, "maxStorageBufferRange": 4096,
                                        "maxComputeWorkGroupCount": [4, 4, 4]})",
                                    "limits.json"));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const vk::Error& e) {
      CHECK(e.failure() == vk::Failure::Limit);
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  const std::string buffer = message([&] { vk::Buffer(ctx, 2 * kMiB, vk::MemoryKind::DeviceLocal, "big"); });
  CHECK(buffer.rfind("Vulkan: a buffer of 2.0 MiB for big is more than ", 0) == 0);
  CHECK(buffer.find("(maxBufferSize 1.0 MiB)") != std::string::npos);

  const gpu::Kernels kernels(ctx, std::nullopt, core::Precision::FP32);
  vk::Buffer a(ctx, 8192, vk::MemoryKind::DeviceLocal, "grads"), b(ctx, 16, vk::MemoryKind::DeviceLocal, "scaler");
  const core::PlanEntry check{.op = core::Op::adamw_update, .N = 2048};
  const std::vector<vk::BufferRange> ranges{{&a}, {&a}, {&a}, {&a}};
  vk::DescriptorPool pool(ctx, 2, 6);
  const std::string binding = message([&] { kernels.allocate_sets(pool, check, ranges); });
  CHECK(binding.rfind("Vulkan: adamw_update's binding 0 (grads) of 8192 bytes is more than ", 0) == 0);
  CHECK(binding.find("(maxStorageBufferRange 4096 bytes)") != std::string::npos);

  // 64 x 64 outputs in 16 x 16 tiles need 4 x 4 workgroups: allowed; 80 x 80 need 5 x 5: refused.
  vk::Buffer m(ctx, 4096, vk::MemoryKind::DeviceLocal, "m");
  const core::PlanEntry ok{.op = core::Op::matmul_backward_data, .B = 16, .C = 16, .OC = 16};
  const std::vector<vk::BufferRange> three{{&m}, {&m}, {&m}};
  const gpu::EntrySets sets = kernels.allocate_sets(pool, ok, three);
  core::PlanEntry wide = ok;
  wide.B = 1 << 12;  // more row tiles than 4 workgroups along y
  const std::string dispatch = message([&] {
    ctx.run_one_shot([&](VkCommandBuffer cmd) {
      kernels.dispatch(cmd, wide, sets, core::kernel_def(wide.op).args(wide, core::StepArgs{}));
    });
  });
  CHECK(dispatch.find("workgroups along y is more than the device allows (maxComputeWorkGroupCount[1] 4)") !=
        std::string::npos);
}

TEST_CASE("a convolution with more tile rows than maxComputeWorkGroupCount[1] folds them into z, as the reference") {
  if (!test::vulkan_device_or_skip("the folded convolution dispatches")) return;
  // Two workgroups along y at most: 3 images of 9 x 9 pixels are 243 rows of the implicit GEMM, 4 tile rows of the
  // texel path's 64 and 8 of the 32x32 tiling's, so each dispatch needs z = 2 to 4. Without the folding
  // vk::record_dispatch refuses them (a batch of ~5000 images on a device with 65535).
  vk::Context ctx(vk::ContextOptions{-1, true},
                  vk::parse_profile(R"({"maxComputeWorkGroupCount": [65535, 2, 65535]})", "rows.json"));
  const gpu::GemmConfig configs[] = {gpu::choose_gemm_config(ctx, core::Precision::FP32),
                                     {gpu::GemmPath::Tiled, gpu::gemm_tile_candidates()[2], false}};
  for (const gpu::GemmConfig& config : configs)
    for (core::Op op : {core::Op::conv2d_forward, core::Op::conv2d_backward_data}) {
      CAPTURE(config.name());
      CAPTURE(core::kernel_name(op));
      const gpu::Kernels k(ctx, config, core::Precision::FP32, VK_NULL_HANDLE, op);
      core::PlanEntry e{.op = op, .activation = true, .B = 3, .C = 4, .OC = 8};
      e.H = e.W = 9;
      e.KS = 3;
      e.pad = 1;
      const std::array<uint32_t, 3> groups = k.groups(e);
      CHECK(groups[1] <= 2);
      CHECK(groups[2] >= 2);
      const core::KernelDef& def = core::kernel_def(op);
      const core::StepArgs step;
      core::Pcg32 rng(11);
      std::vector<std::vector<double>> ref;
      for (const core::BindingDef& b : def.bindings) {
        ref.emplace_back(b.elements(e, step), 0.0);
        if (!b.writes())
          for (double& v : ref.back()) v = rng.uniform(-1, 1);
      }
      std::vector<vk::Buffer> buffers;
      for (size_t i = 0; i < ref.size(); ++i)
        buffers.push_back(test::to_buffer(ctx, std::vector<float>(ref[i].begin(), ref[i].end()), def.bindings[i].name));
      std::vector<vk::BufferRange> ranges;
      for (const vk::Buffer& b : buffers) ranges.push_back({&b});
      cpu::run_reference(e, step, ref, core::Precision::FP32);
      vk::DescriptorPool pool(ctx, 2, 5);
      const gpu::EntrySets sets = k.allocate_sets(pool, e, ranges);
      const core::KernelArgs args = def.args(e, step);
      ctx.run_one_shot([&](VkCommandBuffer cmd) { k.dispatch(cmd, e, sets, args); });
      for (size_t i = 0; i < ref.size(); ++i) {
        if (!def.bindings[i].writes()) continue;
        const std::vector<float> got = test::from_buffer<float>(ctx, buffers[i], ref[i].size());
        size_t wrong = 0;
        for (size_t j = 0; j < got.size(); ++j) wrong += std::fabs(got[j] - ref[i][j]) > 1e-5 + 1e-5 * std::fabs(ref[i][j]);
        CHECK_MESSAGE(wrong == 0, def.bindings[i].name << ": " << wrong << " of " << got.size() << " values differ");
      }
    }
  test::check_no_validation_messages(ctx.validation_log());
}

TEST_CASE("a profile whose workgroups are smaller than bias_backward's row lanes is refused, naming the limit") {
  if (!test::vulkan_device_or_skip("the workgroup size check")) return;
  // Below Vulkan's minimum of 128 invocations: no real device, but a profile file may say so.
  const vk::DeviceProfile small = vk::parse_profile(R"({"maxComputeWorkGroupInvocations": 16})", "w.json");
  vk::Context ctx(vk::ContextOptions{-1, true}, small);
  std::string what = "not refused";
  try {
    const gpu::Kernels kernels(ctx, std::nullopt, core::Precision::FP32, VK_NULL_HANDLE, core::Op::bias_backward);
  } catch (const vk::Error& e) {
    CHECK(e.failure() == vk::Failure::Limit);
    what = e.what();
  }
  CHECK(what.find("bias_backward needs workgroups of at least 32 invocations; this device allows 16") !=
        std::string::npos);
  CHECK(what.find("maxComputeWorkGroupInvocations") != std::string::npos);
}
