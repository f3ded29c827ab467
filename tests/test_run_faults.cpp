// Fault injection on a live session: a GPU allocation that fails in the middle of a live batch-size change (at each
// buffer the new trainer allocates in turn, through vk::fail_allocation_after) must be refused with a clear message
// while the current trainer keeps training, and the weights must end bit-identical to a run where the change was
// never attempted. Every step is taken at a known place (paused from the start, single steps), so two runs take the
// same steps in the same order.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "eventually.hpp"
#include "gpu_test_util.hpp"
#include "run/data.hpp"
#include "run/session.hpp"
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
