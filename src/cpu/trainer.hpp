// cpu::Trainer: executes each StepPlan entry with the CPU kernels on a ThreadPool, timing each with the wall clock.
#pragma once
#include <memory>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/trainer.hpp"

namespace cpu {

// cfg.threads threads (0: all hardware threads). `data` must outlive the trainer: it is read in place, not copied,
// so memory_usage().dataset is 0.
// init_params: core::init_parameters(shape, cfg.seed), param_count floats.
std::unique_ptr<core::Trainer> make_trainer(const core::TrainConfig& cfg, const core::DataSplit& data,
                                            const std::vector<float>& init_params);

// "AMD EPYC 7B13 (2 threads, AVX2)": the CPU model from /proc/cpuinfo, thread count and the SIMD width built for.
std::string cpu_description(int threads);

}  // namespace cpu
