// `trainscope sweep --context N,N,...`: a transformer's context sweep (app/sweep_context.cpp).
#pragma once
#include <vector>

#include "app/commands.hpp"
#include "run/sweep.hpp"

namespace app {

// Measures every context length in `contexts` in each attention form of `forms` (false: fused, true: naive) at the
// one batch size of `so`, prints the table (ms/step per backend, the naive scores' memory, naive's step time over
// fused's per context) and writes cli.report (JSON: {"context_sweep": [{"context", "attention", "batch",
// "attention_scores_bytes", "points": [...], "skipped"}]}) and cli.csv/context_sweep.csv. A context a backend or the
// machine cannot take is a skipped row. Returns 0, or 1 when nothing was measured or an output could not be written.
// Throws core::Error(InvalidArgument) for a model that is not a transformer or more than one batch size.
int run_context_sweep(const SweepOptions& cli, const run::SweepOptions& so, const std::vector<int>& contexts,
                      const std::vector<bool>& forms);

}  // namespace app
