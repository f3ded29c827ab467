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

// "AMD EPYC 7B13 (2 threads, AVX-512 8x32/6x32/12x16)": the CPU model from /proc/cpuinfo, the thread count and the GEMM
// micro-kernel that runs (cpu::gemm_kernel_name(): chosen at run time, so it names what actually executes).
std::string cpu_description(int threads);

}  // namespace cpu
