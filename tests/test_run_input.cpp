// The host input pipeline (--input host, issue 24): the loader's batches against a plain reference of the batch (the
// dataset's rows in the epoch's order, cropped and flipped by a reference written another way), for every loader
// thread count and prefetch depth and out of sequence; and training: the first 20 fp32 losses of each backend
// bit-identical across every loader setting (threads, prefetch, pinned / pageable) and to the device-resident
// input, augmented training against the whole-step reference in double, the upload's row in the kernel table with
// its exact bytes, and the loader's and the upload's spans on each step's record.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "core/metrics.hpp"
#include "core/rng.hpp"
#include "core/timeline.hpp"
#include "cpu/thread_start.hpp"
#include "cpu/train_step.hpp"
#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"
#include "run/loader.hpp"

namespace {

// 8x8 images (augmentable), 4 classes.
const core::DataSplit& images() {
  static const core::DataSplit d = core::make_random(64, 4, 160, 40, 11);
  return d;
}

// The reference of an augmented row: the image zero-padded by 4 on each side into a 16x16 array, the 8x8 window at
// (4 + dy, 4 + dx) cut out, then mirrored left-right when flipped; the draws as documented in core/input.hpp.
std::vector<float> reference_row(const core::Dataset& d, uint32_t sample, size_t position, uint64_t seed,
                                 bool augment) {
  const float* src = d.row(static_cast<int>(sample));
  std::vector<float> out(src, src + d.features);
  if (!augment) return out;
  const int side = 8, pad = core::kAugmentPadding, P = side + 2 * pad;
  core::Pcg32 rng(seed, (static_cast<uint64_t>(position) << 32) | sample);
  const int dy = static_cast<int>(rng.below(2 * pad + 1)) - pad;
  const int dx = static_cast<int>(rng.below(2 * pad + 1)) - pad;
  const bool flip = rng.below(2) == 1;
  std::vector<float> padded(size_t(P * P), 0.0f);
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) padded[size_t((i + pad) * P + j + pad)] = src[i * side + j];
  std::vector<float> crop(size_t(side * side));
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) crop[size_t(i * side + j)] = padded[size_t((i + pad + dy) * P + j + pad + dx)];
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) out[size_t(i * side + j)] = crop[size_t(i * side + (flip ? side - 1 - j : j))];
  return out;
}

void check_batch(const core::HostBatch& b, const std::vector<uint32_t>& order, size_t first, int batch,
                 core::Precision p, uint64_t seed, bool augment) {
  const core::Dataset& d = images().train;
  REQUIRE(b.y.size() == size_t(batch));
  REQUIRE(b.x.size_bytes() == size_t(batch) * size_t(d.features) * core::storage_bytes(p));
  int wrong = 0;
  for (int r = 0; r < batch; ++r) {
    const uint32_t sample = order[first + size_t(r)];
    const std::vector<float> want = reference_row(d, sample, first + size_t(r), seed, augment);
    if (b.y[size_t(r)] != d.y[sample]) ++wrong;
    for (int c = 0; c < d.features; ++c) {
      const size_t i = size_t(r) * size_t(d.features) + size_t(c);
      uint32_t got = 0, ref = 0;
      if (p == core::Precision::FP32) {
        std::memcpy(&got, b.x.data() + i * 4, 4);
        std::memcpy(&ref, &want[size_t(c)], 4);
      } else {
        uint16_t g16 = 0;
        std::memcpy(&g16, b.x.data() + i * 2, 2);
        got = g16;
        ref = p == core::Precision::FP16 ? core::float_to_fp16(want[size_t(c)]) : core::float_to_bf16(want[size_t(c)]);
      }
      if (got != ref) ++wrong;
    }
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("the loader's batches are the reference's, for every thread count, prefetch depth and precision") {
  const core::Dataset& d = images().train;
  const int batch = 24;
  const std::vector<uint32_t> order = core::epoch_order(d.count, 5, 1);
  for (bool augment : {false, true})
    for (core::Precision p : {core::Precision::FP32, core::Precision::BF16})
      for (int threads : {1, 3})
        for (int prefetch : {0, 2}) {
          CAPTURE(augment);
          CAPTURE(core::to_string(p));
          CAPTURE(threads);
          CAPTURE(prefetch);
          core::InputPipeline settings{core::InputSource::Host, augment, threads, prefetch, false};
          run::BatchLoader loader(d, batch, p, settings, 5);
          loader.begin_epoch(order);
          for (size_t first = 0; first + batch <= order.size(); first += batch) {
            const core::HostBatch b = loader.take(first);
            check_batch(b, order, first, batch, p, 5, augment);
            CHECK(!b.spans.empty());
          }
          // Out of sequence (a rebuild mid-epoch): the prefetch restarts at that position.
          check_batch(loader.take(2 * size_t(batch)), order, 2 * size_t(batch), batch, p, 5, augment);
          check_batch(loader.take(0), order, 0, batch, p, 5, augment);
          CHECK_THROWS_AS(loader.take(order.size() - 1), core::Error);
        }
}

namespace {

core::TrainConfig config(const std::string& backend, const core::InputPipeline& input) {
  core::TrainConfig cfg;
  cfg.dataset = "random";
  cfg.hidden = {16};
  cfg.batch = 8;
  cfg.lr = 1e-2f;
  cfg.backends = {backend};
  cfg.threads = 2;
  cfg.readback_interval = 4;
  cfg.validation = backend == "gpu";
  cfg.seed = 9;
  cfg.input = input;
  return cfg;
}

std::unique_ptr<core::Trainer> make(const core::TrainConfig& cfg, gpu::DeviceCache* cache) {
  const core::ModelShape shape = core::model_shape(cfg, images());
  const std::vector<float> init = core::init_parameters(shape, cfg.seed);
  std::unique_ptr<core::Trainer> t = cfg.backends[0] == "gpu" ? gpu::make_trainer(cfg, images(), init, cache)
                                                              : cpu::make_trainer(cfg, images(), init);
  if (cfg.input.host()) t->set_batch_source(run::make_loader(cfg, images()));
  return t;
}

// steps training steps from the first of epoch 0 (20 steps of 8 = all 160 samples).
std::vector<core::StepRecord> train(core::Trainer& t, const core::TrainConfig& cfg, int steps) {
  t.begin_epoch(core::epoch_order(images().train.count, cfg.seed, 0));
  for (int s = 0; s < steps; ++s) t.step(size_t(s) * size_t(cfg.batch));
  return t.flush();
}

}  // namespace

TEST_CASE("a loader thread the system refuses is an error naming it; the loader threads started before are joined") {
  // Before: std::system_error unwound past the joinable loader threads: std::terminate (a hang under prlimit --nproc).
  const core::Dataset& d = images().train;
  for (int refused : {1, 3}) {
    CAPTURE(refused);
    cpu::fail_thread_start_after(refused - 1);
    std::string error;
    try {
      run::BatchLoader loader(d, 24, core::Precision::FP32, {core::InputSource::Host, false, 4, 2, false}, 5);
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::InvalidArgument);
      error = e.what();
    }
    CAPTURE(error);
    CHECK(error.rfind("cannot start loader thread " + std::to_string(refused) + " of 4: the system refused", 0) == 0);
    CHECK(error.find(refused == 1 ? std::string("use --input device")
                                   : "use at most --loader-threads " + std::to_string(refused - 1)) != std::string::npos);
  }
}

TEST_CASE("the first 20 fp32 losses are bit-identical across every loader setting and to device-resident input") {
  const bool gpu = test::vulkan_device_or_skip("the GPU backend's runs");
  std::unique_ptr<gpu::DeviceCache> cache;
  if (gpu) cache = std::make_unique<gpu::DeviceCache>();
  const std::vector<core::InputPipeline> settings = {
      {core::InputSource::Host, false, 1, 0, false},
      {core::InputSource::Host, false, 3, 2, false},
      {core::InputSource::Host, false, 2, 1, true},
  };
  for (const std::string backend : {"cpu", "gpu"}) {
    if (backend == "gpu" && !gpu) continue;
    CAPTURE(backend);
    const core::TrainConfig device_cfg = config(backend, {});
    const std::vector<core::StepRecord> device = train(*make(device_cfg, cache.get()), device_cfg, 20);
    REQUIRE(device.size() == 20);
    for (const core::InputPipeline& s : settings) {
      CAPTURE(core::to_string(s));
      const core::TrainConfig cfg = config(backend, s);
      std::unique_ptr<core::Trainer> t = make(cfg, cache.get());
      REQUIRE(t->plan().entries.front().transfer());
      const std::vector<core::StepRecord> host = train(*t, cfg, 20);
      REQUIRE(host.size() == 20);
      int differ = 0;
      for (size_t i = 0; i < host.size(); ++i) differ += std::memcmp(&host[i].loss, &device[i].loss, 4) != 0;
      CHECK(differ == 0);
      // The loader's work and the host's wait and upload are on every step's record.
      for (const core::StepRecord& r : host) {
        CHECK(!r.loader.empty());
        bool wait = false, upload = false;
        for (const core::HostSpan& h : r.host) {
          wait |= h.phase == core::HostPhase::LoaderWait;
          upload |= h.phase == core::HostPhase::Upload;
        }
        CHECK(wait);
        CHECK(upload == (backend == "gpu"));
      }
      // The upload's row: a transfer named upload_batch, its bytes exactly B x C0 x 4 + B x 4 per step.
      core::KernelTable table(0);
      for (const core::StepRecord& r : host) table.add(t->plan(), r);
      const std::vector<core::KernelRow> rows = table.rows();
      REQUIRE(!rows.empty());
      CHECK(rows.front().name == "upload_batch");
      CHECK(t->plan().entries.front().bytes() == double(8 * 64 * 4 + 8 * 4));
      CHECK(t->plan().entries.front().flops == 0);
    }
  }
}

TEST_CASE("augmented host input trains on the reference's augmented batches (whole-step reference in double)") {
  const bool gpu = test::vulkan_device_or_skip("the GPU backend's runs");
  std::unique_ptr<gpu::DeviceCache> cache;
  if (gpu) cache = std::make_unique<gpu::DeviceCache>();
  const int steps = 4;
  for (const std::string backend : {"cpu", "gpu"}) {
    if (backend == "gpu" && !gpu) continue;
    CAPTURE(backend);
    const core::TrainConfig cfg = config(backend, {core::InputSource::Host, true, 2, 1, false});
    const std::vector<core::StepRecord> got = train(*make(cfg, cache.get()), cfg, steps);
    REQUIRE(got.size() == size_t(steps));
    // The reference trains on a dataset made of the reference's augmented batches, taken in order.
    const std::vector<uint32_t> order = core::epoch_order(images().train.count, cfg.seed, 0);
    core::Dataset augmented = images().train;
    const core::ModelShape shape = core::model_shape(cfg, images());
    cpu::reference::TrainState state = cpu::reference::initial_state(cfg, core::init_parameters(shape, cfg.seed));
    std::vector<uint32_t> rows(size_t(cfg.batch));
    for (int s = 0; s < steps; ++s) {
      for (int r = 0; r < cfg.batch; ++r) {
        const size_t position = size_t(s * cfg.batch + r);
        const std::vector<float> x = reference_row(images().train, order[position], position, cfg.seed, true);
        std::copy(x.begin(), x.end(), augmented.x.begin() + std::ptrdiff_t(position) * 64);
        augmented.y[position] = images().train.y[order[position]];
        rows[size_t(r)] = uint32_t(position);
      }
      const cpu::reference::StepResult ref = cpu::reference::train_step(cfg, shape, augmented, rows, state);
      CAPTURE(s);
      CHECK(std::fabs(got[size_t(s)].loss - ref.loss) / ref.loss <= 1e-6);
    }
    // Augmentation changes the batches: the unaugmented reference's first loss is another number.
    cpu::reference::TrainState plain = cpu::reference::initial_state(cfg, core::init_parameters(shape, cfg.seed));
    const double unaugmented =
        cpu::reference::train_step(cfg, shape, images().train, std::span(order).first(size_t(cfg.batch)), plain).loss;
    CHECK(std::fabs(got[0].loss - unaugmented) / unaugmented > 1e-4);
  }
}

namespace {

// The GPU busy share (core::BackendTimeline::busy_share: kernel time from the timestamps over wall time step end to
// step end) of `steps` steps with a loader of `threads`, `prefetch` and a test-only delay of delay_ms per batch
// (nullopt: device-resident input); the first step (warm-up) left out. Read back after every step (readback 1), as a
// training loop that reads each loss does: the host waits for the GPU, so what the loader has not done ahead is
// GPU idle time.
double busy_share(gpu::DeviceCache* cache, std::optional<core::InputPipeline> input, double delay_ms, double* busy_ms) {
  core::TrainConfig cfg = config("gpu", input.value_or(core::InputPipeline{}));
  cfg.hidden = {256, 256};
  cfg.batch = 16;
  cfg.readback_interval = 1;
  cfg.validation = false;  // timings: no validation layer in the way
  const core::ModelShape shape = core::model_shape(cfg, images());
  std::unique_ptr<core::Trainer> t = gpu::make_trainer(cfg, images(), core::init_parameters(shape, cfg.seed), cache);
  if (input) t->set_batch_source(std::make_unique<run::BatchLoader>(images().train, cfg.batch, cfg.precision, *input,
                                                                     cfg.seed, delay_ms));
  const std::vector<core::StepRecord> records = train(*t, cfg, images().train.count / cfg.batch);
  core::TimelineRecorder recorder(records.size());
  for (const core::StepRecord& r : records) recorder.add(t->plan(), r);
  const core::BackendTimeline timeline = recorder.timeline("gpu", "");
  double busy = 0, wall = 0;
  for (size_t i = 1; i < timeline.steps.size(); ++i) busy += timeline.steps[i].busy_s, wall += timeline.steps[i].wall_s;
  if (busy_ms) *busy_ms = 1e3 * busy / double(timeline.steps.size() - 1);
  return wall > 0 ? busy / wall : 0;
}

}  // namespace

TEST_CASE("GPU busy falls when a slowed loader is the bottleneck, and rises with loader threads and prefetch") {
  if (!test::vulkan_device_or_skip("the GPU busy share")) return;
  gpu::DeviceCache cache;
  // S: the kernel time of a step; the loader is slowed by multiples of it, so that the direction holds whatever the
  // device's speed: with prefetch 0 a step's wall time is the loader's time plus S, with prefetch the larger of the
  // two; with N threads the loader's time is 1/N.
  double S = 0;
  const double device = busy_share(&cache, std::nullopt, 0, &S);
  REQUIRE(S > 0);
  MESSAGE("kernel time per step " << S << " ms, device-resident busy " << device);
  const auto host = [](int threads, int prefetch) {
    return core::InputPipeline{core::InputSource::Host, false, threads, prefetch, false};
  };
  const double slow = busy_share(&cache, host(1, 0), 8 * S, nullptr);
  const double threads = busy_share(&cache, host(4, 0), 8 * S, nullptr);
  // Prefetch against none with the loader's time equal to a step's kernels (ideally 0.5 against 1.0; quiet: 0.42
  // against 0.62-0.70): on a loaded 2-core machine the loader threads and a software GPU share the cores, and one
  // pair of runs came out 0.44 against 0.46. Up to three pairs: the direction must show in one of them.
  double no_prefetch = 0, prefetch = 0;
  for (int round = 0; round < 3 && prefetch <= no_prefetch; ++round) {
    no_prefetch = busy_share(&cache, host(2, 0), 2 * S, nullptr);
    prefetch = busy_share(&cache, host(2, 2), 2 * S, nullptr);
  }
  MESSAGE("busy: 1 thread " << slow << ", 4 threads " << threads << "; 2 threads prefetch 0 " << no_prefetch
                            << ", prefetch 2 " << prefetch);
  CHECK(slow < device);
  CHECK(threads > slow);
  CHECK(prefetch > no_prefetch);
}

TEST_CASE("the CNN on host input: as device-resident input on the GPU, and augmented, GPU and CPU agree") {
  if (!test::vulkan_device_or_skip("the GPU backend's CNN runs")) return;
  gpu::DeviceCache cache;
  auto cnn = [](const std::string& backend, const core::InputPipeline& input) {
    core::TrainConfig cfg = config(backend, input);
    cfg.model = core::ModelKind::CNN;
    cfg.conv = {4};  // 8x8 images: conv 4, pool to 4x4, dense 16, 4 classes
    return cfg;
  };
  // images() as 8x8 one-channel images (the same values), which a CNN needs.
  static const core::DataSplit pictures = [] {
    core::DataSplit d = images();
    for (core::Dataset* s : {&d.train, &d.test}) {
      s->height = s->width = 8;
      s->channels = 1;
    }
    return d;
  }();
  auto make = [&](const core::TrainConfig& cfg, gpu::DeviceCache* c) {
    const std::vector<float> init = core::init_parameters(core::model_shape(cfg, pictures), cfg.seed);
    std::unique_ptr<core::Trainer> t = cfg.backends[0] == "gpu" ? gpu::make_trainer(cfg, pictures, init, c)
                                                                : cpu::make_trainer(cfg, pictures, init);
    if (cfg.input.host()) t->set_batch_source(run::make_loader(cfg, pictures));
    return t;
  };
  const int steps = 6;
  // Unaugmented host batches hold the same bytes as the device's gather: the same bits.
  const core::TrainConfig device_cfg = cnn("gpu", {});
  const std::vector<core::StepRecord> device = train(*make(device_cfg, &cache), device_cfg, steps);
  const core::TrainConfig host_cfg = cnn("gpu", {core::InputSource::Host, false, 2, 1, false});
  std::unique_ptr<core::Trainer> host_trainer = make(host_cfg, &cache);
  REQUIRE(host_trainer->plan().entries.front().transfer());
  const std::vector<core::StepRecord> host = train(*host_trainer, host_cfg, steps);
  REQUIRE(host.size() == size_t(steps));
  REQUIRE(device.size() == size_t(steps));
  for (int s = 0; s < steps; ++s) CHECK(std::memcmp(&host[size_t(s)].loss, &device[size_t(s)].loss, 4) == 0);
  // Augmented (crop and flip on the loader threads): both backends train on the same batches.
  std::vector<std::vector<core::StepRecord>> augmented;
  for (const std::string backend : {"cpu", "gpu"}) {
    const core::TrainConfig cfg = cnn(backend, {core::InputSource::Host, true, 2, 1, false});
    augmented.push_back(train(*make(cfg, &cache), cfg, steps));
    REQUIRE(augmented.back().size() == size_t(steps));
  }
  for (int s = 0; s < steps; ++s) {
    const float cpu = augmented[0][size_t(s)].loss, gpu = augmented[1][size_t(s)].loss;
    CHECK(std::fabs(gpu - cpu) <= 1e-4 * std::fabs(cpu));
  }
}
