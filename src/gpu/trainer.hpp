// gpu::Trainer: records each StepPlan as Vulkan compute dispatches, one command buffer per step, a timestamp query
// after every dispatch; losses and timestamps are read back every readback_interval steps.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/trainer.hpp"
#include "gpu/gemm_config.hpp"

namespace gpu {

class DeviceCache;

// Creates the Vulkan trainer on device cfg.device (-1: best). The whole training and test set is uploaded once
// (memory_usage().dataset counts that copy). With a `cache` (gpu/device_cache.hpp), the Vulkan device, the compiled
// kernels and the uploaded dataset of earlier trainers made from it are reused, so a rebuild for a new batch size,
// optimizer or precision only allocates what depends on those; without one, everything is made for this trainer.
// Set-up stages are told to core::report_progress. `data` (and `cache`) must outlive the trainer.
// init_params: core::init_parameters(shape, cfg.seed).
// Throws core::Error(Vulkan) when there is no Vulkan loader or device, or set-up fails, with what to do.
std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params, DeviceCache* cache = nullptr);

// For the tests: the summed vk::Buffer::size() of every buffer a trainer from make_trainer() holds, walked member by
// member, independently of the per-category tally behind memory_usage() (whose total() must equal it), in bytes.
// 0 when `trainer` is not a gpu trainer.
size_t allocated_buffer_bytes(const core::Trainer& trainer);

// For the tests: the GEMM configuration a trainer from make_trainer() runs (gpu/gemm_config.hpp: the path, tiles and
// split-K rule its device chose), nullopt when `trainer` is not a gpu trainer.
std::optional<GemmConfig> gemm_config_of(const core::Trainer& trainer);

}  // namespace gpu
