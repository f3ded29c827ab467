// run::preflight (see preflight.hpp).
#include "run/preflight.hpp"

#include "core/thread_budget.hpp"
#include "run/validate.hpp"

namespace run {

void preflight(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<core::NewTrainer>& trainers,
               const PreflightOptions& o) {
  validate_for_backends(cfg, data);
  core::check_training_memory(cfg, data, trainers, o.host ? *o.host : core::host_memory(), o.extra);
  if (o.threads) core::check_training_threads(cfg, trainers);
}

}  // namespace run
