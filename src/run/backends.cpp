// The trainer factories of the real backends, by name (kept apart from session.cpp so that tests of the session
// with fake trainers link without the Vulkan and CPU layers).
#include <fmt/format.h>

#include "core/error.hpp"
#include "cpu/trainer.hpp"
#include "gpu/trainer.hpp"
#include "run/session.hpp"

namespace run {

std::vector<BackendSpec> backends_from_config(const core::TrainConfig& cfg) {
  std::vector<BackendSpec> specs;
  for (const auto& name : cfg.backends) {
    if (name == "gpu")
      specs.push_back({name, gpu::make_trainer});
    else if (name == "cpu")
      specs.push_back({name, cpu::make_trainer});
    else
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("--backend {}: unknown backend (allowed: gpu, cpu, or gpu,cpu)", name));
  }
  return specs;
}

}  // namespace run
