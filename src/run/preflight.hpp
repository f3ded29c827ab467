// run::preflight: the one check made before trainers are built, wherever a run starts or is rebuilt (train, the
// dashboard's start, a Reset, a live change's new trainer, each sweep point), so that each of them refuses the same
// settings with the same words (issue 33, part 1).
#pragma once
#include <optional>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/memory_budget.hpp"

namespace run {

struct PreflightOptions {
  core::MemoryNeed extra;                // what else the command holds beside its trainers (the window, a picture)
  std::optional<core::HostMemory> host;  // the memory to fit in; none: core::host_memory() now
  // The thread budget too (core::check_training_threads). Not where old trainers still run while the new ones are
  // checked (a Reset, a live change): their threads would be counted twice.
  bool threads = true;
};

// In order: run::validate_for_backends (the settings against the data and the GPU's limits),
// core::check_training_memory (what `trainers` will allocate, from core::run_plan, against the host's memory) and,
// with o.threads, core::check_training_threads. Throws core::Error(InvalidArgument) with the first problem's one line.
void preflight(const core::TrainConfig& cfg, const core::DataSplit& data, const std::vector<core::NewTrainer>& trainers,
               const PreflightOptions& o = {});

}  // namespace run
