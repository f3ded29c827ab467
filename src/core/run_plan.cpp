// core::run_plan (see run_plan.hpp).
#include "core/run_plan.hpp"

#include <algorithm>

namespace core {

RunPlan run_plan(const TrainConfig& c, const DataSplit& data, Precision precision) {
  RunPlan r;
  r.shape = model_shape(c, data);
  r.plan = build_step_plan(r.shape, c.batch, c.activation, c.optimizer, precision, c.execution.unfused,
                           c.execution.naive_attention);
  if (c.input.host()) use_host_upload(r.plan);
  r.sizes = {static_cast<size_t>(data.train.count), static_cast<size_t>(data.test.count),
             static_cast<size_t>(std::max(1, c.readback_interval))};
  r.layout = tensor_layout(r.plan, r.sizes);
  return r;
}

}  // namespace core
