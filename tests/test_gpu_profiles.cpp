// A short training run on this device as TRAINSCOPE_DEVICE_PROFILE presents it: scripts/test runs this test under
// spec-min and under desktop-discrete (tests/CMakeLists.txt; the device as it is trains in test_training and others). Each time the GPU trainer
// is checked against the CPU trainer step by step (same weights, same batches) and its timestamps for order and
// sense; under desktop-discrete the GEMMs must run the GPU tiling and split-K paths (a software device's texel path
// otherwise); under spec-min the 36-bit timestamp counter starts just before its wrap, which the run crosses.
// Also: a device without timestamps on its compute queue still trains, untimed, and says so.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/batches.hpp"
#include "core/dataset.hpp"
#include "core/metrics.hpp"
#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "gpu_test_util.hpp"
#include "vk/limits.hpp"

namespace {

core::TrainConfig spiral_config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.hidden = {64, 32};
  cfg.batch = 128;  // 2 slices of 64 rows for the output layer's weight gradient where split-K pays
  cfg.lr = 0.01f;
  cfg.readback_interval = 4;
  cfg.validation = true;
  return cfg;
}

}  // namespace

TEST_CASE("a short training run under this device's profile: GPU against the CPU, the paths the profile implies") {
  if (!test::vulkan_device_or_skip("training under a device profile")) return;
  const test::ValidationWatch validation;  // every context of this test: no validation message
  const std::optional<vk::DeviceProfile> profile = vk::profile_from_environment();
  MESSAGE("device profile: " << (profile ? profile->name : std::string("none")));
  const bool near_wrap = profile && profile->limits.timestamps_near_wrap;  // spec-min: the run crosses the wrap
  const core::DataSplit data = core::make_spiral(3, 600, 150, 0.05f, 5);
  for (auto act : {core::Activation::ReLU, core::Activation::GELU}) {
    CAPTURE(std::string(core::to_string(act)));
    core::TrainConfig cfg = spiral_config();
    cfg.activation = act;
    const auto params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
    gpu::DeviceCache cache;
    auto g = gpu::make_trainer(cfg, data, params, &cache);
    auto c = cpu::make_trainer(cfg, data, params);
    const auto order = core::epoch_order(data.train.count, cfg.seed, 0);
    g->begin_epoch(order);
    c->begin_epoch(order);
    std::vector<core::StepRecord> gr, cr;
    for (int s = 0; s < 12; ++s) {
      g->step(static_cast<size_t>(s) * cfg.batch);
      c->step(static_cast<size_t>(s) * cfg.batch);
      if (s == 5 && near_wrap) {
        // Half-way, a pause longer than spec-min's distance to the timestamp wrap (vk::Device::masked_ticks), so that
        // the second half's timestamps lie beyond it.
        for (auto& r : g->flush()) gr.push_back(r);
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
      }
    }
    for (auto& r : g->flush()) gr.push_back(r);
    for (auto& r : c->flush()) cr.push_back(r);
    REQUIRE(gr.size() == 12);
    REQUIRE(cr.size() == 12);
    for (size_t s = 0; s < gr.size(); ++s) {
      CAPTURE(s);
      CHECK(std::fabs(gr[s].loss - cr[s].loss) <= 1e-4 * std::fabs(cr[s].loss));
      REQUIRE(gr[s].kernel_ms.size() == g->plan().entries.size());
      for (double ms : gr[s].kernel_ms) CHECK(ms >= 0);
      CHECK(gr[s].step_ms > 0);
      CHECK(gr[s].step_ms < 60e3);  // a wrap taken as an interval would read as 2^36 ns = 69 s
      if (s > 0) CHECK(gr[s].start_s > gr[s - 1].start_s);  // increasing across the wrap, placed on the host's clock
    }
    if (near_wrap) CHECK(gr[6].start_s - gr[5].start_s >= 0.5);  // the pause is seen, not folded away by the wrap
    CHECK(cr.back().loss < cr.front().loss);

    const std::optional<gpu::GemmConfig> gemm = gpu::gemm_config_of(*g);
    REQUIRE(gemm);
    long split = 0;
    for (const core::PlanEntry& e : g->plan().entries) split += e.split_k > 1;
    MESSAGE("GEMM configuration: " << gemm->name() << "; split-K entries in the plan: " << split);
    const vk::DeviceInfo& device = vk::cached_devices().at(static_cast<size_t>(vk::pick_best_device(vk::cached_devices())));
    if (!device.software_paths) {  // desktop-discrete on lavapipe, or a real GPU
      CHECK(gemm->path == gpu::GemmPath::Tiled);
      CHECK(split > 0);  // the output layer's weight gradient: 1 workgroup where the device keeps 128 busy
    } else {
      CHECK(gemm->path == gpu::GemmPath::Texel);
    }
    CHECK(g->device_name() == vk::display_name(device));
  }
}

TEST_CASE("a device without timestamps on its compute queue trains untimed and says so") {
  if (!test::vulkan_device_or_skip("training without timestamps")) return;
  const test::ValidationWatch validation;
  // A device profile of its own: no timestamps on the compute queue (timestampComputeAndGraphics false allows it).
  gpu::DeviceCache cache({}, vk::parse_profile(R"({"timestampValidBits": 0})", "untimed.json"));
  const core::DataSplit data = core::make_spiral(3, 100, 30, 0.05f, 5);
  core::TrainConfig cfg = spiral_config();
  cfg.batch = 32;
  const auto params = core::init_parameters(core::model_shape(cfg, data), cfg.seed);
  auto g = gpu::make_trainer(cfg, data, params, &cache);
  auto c = cpu::make_trainer(cfg, data, params);
  CHECK(g->device_name().find("[no timestamps on its compute queue: kernel times unavailable]") != std::string::npos);
  const auto order = core::epoch_order(data.train.count, cfg.seed, 0);
  g->begin_epoch(order);
  c->begin_epoch(order);
  for (int s = 0; s < 5; ++s) {
    g->step(static_cast<size_t>(s) * cfg.batch);
    c->step(static_cast<size_t>(s) * cfg.batch);
  }
  const std::vector<core::StepRecord> gr = g->flush(), cr = c->flush();
  REQUIRE(gr.size() == 5);
  core::KernelTable table;
  for (size_t s = 0; s < gr.size(); ++s) {
    CHECK(gr[s].kernel_ms.empty());  // untimed, not zero
    CHECK(gr[s].step_ms > 0);        // the step's share of the wall clock (issue 34: was 0)
    CHECK(gr[s].start_s > 0);
    CHECK(std::fabs(gr[s].loss - cr[s].loss) <= 1e-4 * std::fabs(cr[s].loss));
    table.add(g->plan(), gr[s]);
  }
  CHECK(table.untimed_steps() == 5);
  CHECK(table.steps() == 0);
  CHECK(g->evaluate().accuracy > 0);
}
