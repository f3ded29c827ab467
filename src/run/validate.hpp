// run::validate_for_backends: the checks of a run's settings that need its data, before a trainer is made: at the
// start of `train`, of the dashboard and of a sweep point, and for every reset or live change (the Controls, lessons).
#pragma once
#include "core/config.hpp"
#include "core/dataset.hpp"

namespace run {

// core::validate_against_data (the batch against the training set, the 16 GiB cap), then, when cfg trains on the
// GPU, gpu::device_fit_problem on the device cfg.device names (the best one for -1), as vk::cached_devices()
// describes it (device profile included). Throws core::Error(InvalidArgument) with the one-line reason. A machine
// without a Vulkan device is not refused here (the GPU backend then stops with its own message and the CPU trains);
// a bad TRAINSCOPE_DEVICE_PROFILE is (InvalidArgument).
void validate_for_backends(const core::TrainConfig& cfg, const core::DataSplit& data);

}  // namespace run
