// core::RunPlan: one run of a configuration on its data, worked out once from the settings: the model's shape, the
// step plan as the trainers run it (the storage precision's entries, --input host's upload applied) and the tensor
// layout the trainers allocate. The trainers, the pre-flight checks (validate_against_data, the host memory budget,
// gpu::device_fit_problem) and the reports read it, so that what is checked is what is allocated (issue 33, part 1).
// Pure: sizes and offsets only, nothing allocated.
#pragma once
#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/model.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"

namespace core {

struct RunPlan {
  ModelShape shape;   // model_shape(c, data)
  StepPlan plan;      // build_step_plan(shape, c.batch, ...) in the storage precision; use_host_upload when host input
  LayoutSizes sizes;  // the data's sample counts, c.readback_interval slots (at least 1), no staging ring
  TensorLayout layout;  // tensor_layout(plan, sizes) in the plan's precision

  // The same plan's tensors in `precision` (the header's "the same model in fp32"), with the same sizes.
  TensorLayout layout_in(Precision precision) const { return tensor_layout(plan, sizes, precision); }
};

// The plan of `c` on `data`, stored in `precision` (c.precision for what a trainer allocates; FP32 for the bounds
// that every storage precision fits in). Split-K is not applied: it is chosen per device (gpu::Kernels::with_split_k,
// partials of at most a few MB), as is the GPU's pinned staging ring (LayoutSizes::staging). Throws what model_shape
// throws (core::Error(InvalidArgument): a CNN on data without images, or more convolutions than its images allow).
RunPlan run_plan(const TrainConfig& c, const DataSplit& data, Precision precision);
inline RunPlan run_plan(const TrainConfig& c, const DataSplit& data) { return run_plan(c, data, c.precision); }

}  // namespace core
