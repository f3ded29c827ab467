// The host memory budget's estimate of a trainer (core::training_memory_need) against the real trainers: for fp32
// and fp16, AdamW and SGD, the CPU trainer and the GPU trainer on a software device, the estimate must cover what the
// trainer reports it allocated (Trainer::memory_usage, from its allocations) and stay within a small factor of it, so
// that the budget neither lets an OOM through nor refuses runs that fit.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "core/memory_budget.hpp"
#include "gpu_test_util.hpp"
#include "run/data.hpp"
#include "run/session.hpp"

TEST_CASE("training_memory_need covers each real trainer's allocations, within a factor of 2 for a large model") {
  const bool gpu = !test::no_vulkan_device();
  if (!gpu) MESSAGE("no Vulkan device: the GPU trainer's estimate is not checked here");
  // fp32 with AdamW, fp16 with SGD: each precision and each optimizer once (the four pairs cost twice the time and
  // the estimate treats precision and optimizer independently).
  for (const auto& [precision, optimizer] : {std::pair{core::Precision::FP32, core::Optimizer::AdamW},
                                             std::pair{core::Precision::FP16, core::Optimizer::SGD}}) {
    core::TrainConfig c;
    c.dataset = "spiral";
    c.spiral_points = 200;
    c.hidden = {1024, 512};
    c.batch = 256;
    c.threads = 2;
    c.precision = precision;
    c.optimizer = optimizer;
    c.backends = gpu ? std::vector<std::string>{"gpu", "cpu"} : std::vector<std::string>{"cpu"};
    const core::DataSplit data = run::load_data(c);
    const std::vector<float> init = core::init_parameters(run::model_shape(c, data), c.seed);
    for (const run::BackendSpec& spec : run::backends_from_config(c)) {
      INFO(spec.name << " " << core::to_string(precision) << " " << core::to_string(optimizer));
      const double estimate = core::training_memory_need(c, data, {{spec.name, true}}).total();
      const double allocated = static_cast<double>(spec.make(c, data, init)->memory_usage().total());
      INFO("estimate " << estimate << " bytes, trainer's allocations " << allocated << " bytes");
      CHECK(estimate >= allocated);
      CHECK(estimate <= 2.0 * allocated + 8.0 * (1 << 20));  // + the CPU's per-thread packing buffers
    }
  }
}
