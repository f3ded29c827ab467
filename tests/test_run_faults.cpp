// Fault injection on a live session: a GPU allocation that fails in the middle of a live batch-size change (at each
// buffer the new trainer allocates in turn, through vk::fail_allocation_after) must be refused with a clear message
// while the current trainer keeps training, and the weights must end bit-identical to a run where the change was
// never attempted. Every step is taken at a known place (paused from the start, single steps), so two runs take the
// same steps in the same order. And the failures of real GPUs mid-training (vk::inject_device_lost_after,
// vk::inject_fence_timeout_after): the GPU backend stops saying what happened, the CPU trains on, and a Reset trains
// the GPU again on a new Vulkan device.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "eventually.hpp"
#include "gpu_test_util.hpp"
#include "run/data.hpp"
#include "run/session.hpp"
#include "vk/devices.hpp"
#include "vk/setup.hpp"

namespace {

using test::eventually;

core::TrainConfig fault_config() {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_points = 200;
  cfg.hidden = {16, 8};
  cfg.batch = 16;
  cfg.epochs = 1000;  // runs until stopped
  cfg.lr = 0.01f;
  cfg.readback_interval = 1;
  return cfg;
}

// What every session of this test shares, as the dashboard's resets do (run::backends_from_config): the device
// cache (Vulkan device, kernels, uploaded dataset) and the data, so that a session starts in a fraction of a second.
struct Shared {
  std::shared_ptr<const core::DataSplit> data;
  std::shared_ptr<gpu::DeviceCache> cache = std::make_shared<gpu::DeviceCache>();
};

// One GPU session paused from its start, moved on by single steps. `current` is the trainer the worker trains with,
// so that its weights can be read while the worker is paused: the last one the factory made, unless the test knows
// that a rebuild was refused (the worker then keeps the old one and destroys the new one, which may already have
// been made when the failure came while restoring the state into it).
struct PausedGpuSession {
  std::mutex mutex;
  core::Trainer* current = nullptr;
  int trainers_made = 0;
  run::Observer observer;
  std::unique_ptr<run::Session> session;

  PausedGpuSession(const core::TrainConfig& cfg, const Shared& shared) {
    run::BackendSpec spec{"gpu", [this, cache = shared.cache](const core::TrainConfig& c, const core::DataSplit& d,
                                                              const std::vector<float>& p) {
                            auto t = gpu::make_trainer(c, d, p, cache.get());
                            std::lock_guard lock(mutex);
                            current = t.get();
                            ++trainers_made;
                            return t;
                          }};
    session = std::make_unique<run::Session>(cfg, shared.data, std::vector<run::BackendSpec>{spec}, observer,
                                             run::SessionOptions{true});
    session->post(run::Command(run::Command::Kind::Pause));
    session->start();
    REQUIRE(eventually([&] { return run().paused; }));
  }
  ~PausedGpuSession() {
    session->request_stop();
    session->wait();
  }

  core::BackendRun run() { return session->snapshot().at(0); }

  void advance(int steps) {
    for (int i = 0; i < steps; ++i) {
      const size_t before = run().step_losses.size();
      session->post(run::Command(run::Command::Kind::SingleStep));
      REQUIRE(eventually([&] {
        const auto r = run();
        return (r.step_losses.size() == before + 1 && r.paused) || !r.error.empty();
      }));
      REQUIRE(run().error.empty());
    }
  }

  std::vector<float> weights() {
    std::lock_guard lock(mutex);
    return current->parameters();
  }
};

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr int kStepsBefore = 7, kStepsAfter = 9;

}  // namespace

TEST_CASE("an allocation failure at each buffer of a live batch change: refused, training goes on, same weights") {
  if (!test::vulkan_device_or_skip("the GPU fault-injection test")) return;
  const core::TrainConfig cfg = fault_config();
  Shared shared;
  shared.data = std::make_shared<const core::DataSplit>(run::load_data(cfg));

  // The reference: the same steps, no change attempted.
  std::vector<float> reference;
  {
    PausedGpuSession s(cfg, shared);
    s.advance(kStepsBefore + kStepsAfter);
    reference = s.weights();
  }
  REQUIRE_FALSE(reference.empty());

  // How many allocations a batch change 16 -> 48 makes (it succeeds here).
  long buffers = 0;
  {
    PausedGpuSession s(cfg, shared);
    s.advance(kStepsBefore);
    const long before = vk::allocations_made();
    run::Command change(run::Command::Kind::SetBatch);
    change.value = 48;
    s.session->post(change);
    REQUIRE(eventually([&] { return s.run().config.batch == 48 && !s.run().building; }));
    buffers = vk::allocations_made() - before;
    // A successful change does alter the weights' path (other batches), so the comparison below can fail.
    s.advance(kStepsAfter);
    CHECK_FALSE(bit_identical(s.weights(), reference));
  }
  MESSAGE("a live batch change allocates ", buffers, " buffers");
  REQUIRE(buffers >= 3);

  for (long k = 0; k < buffers; ++k) {
    CAPTURE(k);
    PausedGpuSession s(cfg, shared);
    s.advance(kStepsBefore);
    core::Trainer* trainer_before = nullptr;
    int made_before = 0;
    {
      std::lock_guard lock(s.mutex);
      trainer_before = s.current;
      made_before = s.trainers_made;
    }
    vk::fail_allocation_after(k);
    run::Command change(run::Command::Kind::SetBatch);
    change.value = 48;
    s.session->post(change);
    REQUIRE(eventually([&] { return s.run().status.find("refused") != std::string::npos && !s.run().building; }));
    vk::fail_allocation_after(-1);
    const core::BackendRun r = s.run();
    CAPTURE(r.status);
    // The message says what was refused and why, with the size and the buffer.
    CHECK(r.status.find("batch 16 -> 48 refused: Vulkan: out of GPU memory allocating") != std::string::npos);
    CHECK(r.error.empty());
    REQUIRE(r.config.batch == 16);  // (else the old trainer may be gone: no weights read below)
    REQUIRE(r.running.batch == 16);
    {
      // The worker kept its trainer (a new one, if the factory finished it, was destroyed by the refusal).
      std::lock_guard lock(s.mutex);
      CHECK(s.trainers_made <= made_before + 1);
      s.current = trainer_before;
    }
    s.advance(kStepsAfter);  // training goes on with the old trainer
    CHECK(s.run().step_losses.size() == static_cast<size_t>(kStepsBefore + kStepsAfter));
    CHECK(bit_identical(s.weights(), reference));
  }
}

TEST_CASE("a GPU lost or hung mid-training: it stops with what happened, the CPU trains on, Reset uses a new device") {
  if (!test::vulkan_device_or_skip("the GPU loss and timeout injection")) return;
  for (bool lost : {true, false}) {
    CAPTURE(lost);
    core::TrainConfig cfg = fault_config();
    cfg.backends = {"gpu", "cpu"};
    cfg.epochs = core::kUntilStopped;  // the CPU must not finish while the GPU is still being set up
    auto data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
    auto cache = std::make_shared<gpu::DeviceCache>();
    run::BackendSpec gpu_spec{"gpu", [cache](const core::TrainConfig& c, const core::DataSplit& d,
                                             const std::vector<float>& p) { return gpu::make_trainer(c, d, p, cache.get()); }};
    run::BackendSpec cpu_spec{"cpu", cpu::make_trainer};
    run::Observer observer;
    run::Session session(cfg, data, {gpu_spec, cpu_spec}, observer, run::SessionOptions{true});
    // The 4th training step's submission is lost, or the wait for it never returns (readback after every step).
    if (lost) vk::inject_device_lost_after(3);
    else vk::inject_fence_timeout_after(3);
    session.start();
    auto gpu = [&] { return session.snapshot().at(0); };
    auto cpu = [&] { return session.snapshot().at(1); };
    REQUIRE(eventually([&] { return !gpu().error.empty(); }));
    vk::inject_device_lost_after(-1);
    vk::inject_fence_timeout_after(-1);
    const std::string error = gpu().error;
    CAPTURE(error);
    if (lost)
      CHECK(error.rfind("Vulkan: the GPU was lost (VK_ERROR_DEVICE_LOST) after 3 training steps: its driver reset it", 0) == 0);
    else
      CHECK(error.rfind("Vulkan: the GPU did not finish training step", 0) == 0);
    CHECK(error.find("(Reset starts it again on a new Vulkan device; the CPU backend keeps running)") !=
          std::string::npos);
    CHECK(gpu().step_losses.size() <= 3);  // what was read back before the failure
    // The CPU goes on.
    const size_t cpu_steps = cpu().step_losses.size();
    const bool cpu_trains = eventually([&] { return cpu().step_losses.size() >= cpu_steps + 5; });
    INFO("cpu: steps " << cpu().step_losses.size() << " (from " << cpu_steps << "), status '" << cpu().status
                       << "', finished " << cpu().finished << ", paused " << cpu().paused << ", error '" << cpu().error
                       << "'");
    REQUIRE(cpu_trains);
    CHECK(cpu().error.empty());
    CHECK(cache->counts().devices == 1);
    // Reset: the GPU trains again, on a device made afresh.
    session.request_reset();
    REQUIRE(eventually([&] { return gpu().error.empty() && gpu().step_losses.size() >= 5; }));
    CHECK(cache->counts().devices == 2);
    session.request_stop();
    session.wait();
  }
}

TEST_CASE("a live batch change past the device's storage range is refused before the trainer is made, naming it") {
  if (!test::vulkan_device_or_skip("the live device-limit refusal")) return;
  core::TrainConfig cfg = fault_config();
  cfg.spiral_points = 22000;  // 66,000 samples: room for a batch of 65536
  cfg.hidden = {1024};
  Shared shared;
  shared.data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  PausedGpuSession s(cfg, shared);
  s.advance(2);
  // 65536 x 1024 fp32 activations: 268 MB, past every binding of a device with the spec's 128 MiB (lavapipe's).
  if (vk::cached_devices().front().limits.max_storage_buffer_range >= (uint64_t(65536) * 1024 * 4)) {
    MESSAGE("this device binds 268 MB at once: nothing to refuse here");
    return;
  }
  const int made = s.trainers_made;
  run::Command change(run::Command::Kind::SetBatch);
  change.value = 65536;
  s.session->post(change);
  REQUIRE(eventually([&] { return s.run().status.find("refused") != std::string::npos && !s.run().building; }));
  CAPTURE(s.run().status);
  CHECK(s.run().status.rfind("batch 16 -> 65536 refused: --batch 65536 needs a 268 MB buffer for layer 1's activations "
                             "(65536 x 1024 fp32); ",
                             0) == 0);
  CHECK(s.run().status.find("(maxStorageBufferRange): use --batch <= ") != std::string::npos);
  CHECK(s.trainers_made == made);  // refused before a trainer was made
  s.advance(2);                    // training goes on at batch 16
  CHECK(s.run().config.batch == 16);
}
