// The epoch's progress a backend reports (BackendRun::step_in_epoch of steps_per_epoch, the race header's
// "epoch 2 (3/6)") stays consistent through a batch-size change late in the epoch (issue 25, item 19: after a change
// on the last step the header read "epoch 2 (6/1)": the steps counted at the old size over the new size's total).
#include <doctest/doctest.h>

#include <memory>

#include "cpu/trainer.hpp"
#include "eventually.hpp"
#include "run/data.hpp"
#include "run/session.hpp"

using test::eventually;

TEST_CASE("a batch change near the end of an epoch: the steps shown never exceed the epoch's steps") {
  core::TrainConfig cfg;
  cfg.dataset = "spiral";
  cfg.spiral_classes = 3;
  cfg.spiral_points = 20;  // 60 training samples: 6 steps of 10
  cfg.hidden = {8};
  cfg.batch = 10;
  cfg.epochs = 3;
  cfg.threads = 1;
  cfg.backends = {"cpu"};
  auto data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
  run::Observer observer;
  run::Session session(cfg, data, {{"cpu", cpu::make_trainer}}, observer, run::SessionOptions{true});
  session.post(run::Command(run::Command::Kind::Pause));
  session.start();
  auto run = [&] { return session.snapshot().at(0); };
  REQUIRE(eventually([&] { return run().paused; }));
  for (int i = 0; i < 5; ++i) {  // 5 of the epoch's 6 steps
    const size_t before = run().step_losses.size();
    session.post(run::Command(run::Command::Kind::SingleStep));
    REQUIRE(eventually([&] { return run().step_losses.size() == before + 1 && run().paused; }));
  }
  CHECK(run().step_in_epoch == 5);
  CHECK(run().steps_per_epoch == 6);
  run::Command batch(run::Command::Kind::SetBatch);
  batch.value = 60;  // the whole set: 1 step per epoch, which no longer fits what is left of this one
  session.post(batch);
  REQUIRE(eventually([&] { return run().running.batch == 60 && run().paused; }));
  const core::BackendRun r = run();
  INFO("epoch " << r.epoch << " (" << r.step_in_epoch << "/" << r.steps_per_epoch << ")");
  CHECK(r.steps_per_epoch == 1);
  CHECK(r.step_in_epoch <= r.steps_per_epoch);  // before the fix: 5 of 1
  session.request_stop();
}
