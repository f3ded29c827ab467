// The live settings' commands: which run::Command changes a row of the settings schema while training runs.
#include "run/command.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace run {

Command live_command(const core::Setting& s, const core::TrainConfig& cfg) {
  using K = Command::Kind;
  using T = core::Execution::Toggle;
  const std::string_view key = s.key;
  if (s.change == core::SettingChange::Live) {
    Command c;
    if (key == "batch") c = Command(K::SetBatch), c.value = cfg.batch;
    if (key == "threads") c = Command(K::SetThreads), c.value = cfg.threads;
    if (key == "lr") c = Command(K::SetLearningRate), c.lr = cfg.lr;
    if (key == "optimizer") c = Command(K::SetOptimizer), c.optimizer = cfg.optimizer;
    if (key == "precision") c = Command(K::SetPrecision), c.precision = cfg.precision;
    for (auto [name, toggle] : {std::pair{"unfused", T::Unfused}, {"sync_every_step", T::SyncEveryStep},
                                {"submit_per_kernel", T::SubmitPerKernel}, {"attention", T::NaiveAttention}})
      if (key == name) c = Command(K::SetToggle), c.toggle = toggle, c.on = cfg.execution[toggle];
    for (const char* name : {"input", "augment", "loader_threads", "prefetch", "pageable"})
      if (key == name) c = Command(K::SetInput), c.input = cfg.input;
    if (c.kind != K::Pause) return c;  // Pause: none of the above
  }
  throw core::Error(core::ErrorKind::Internal,
                    fmt::format("the setting \"{}\" has no live command (run::live_command)", key));
}

}  // namespace run
