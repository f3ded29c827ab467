// The trainer factories of the real backends, by name (kept apart from session.cpp so that tests of the session
// with fake trainers link without the Vulkan and CPU layers).
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "cpu/trainer.hpp"
#include "gpu/device_cache.hpp"
#include "gpu/trainer.hpp"
#include "run/background_compile.hpp"
#include "run/loader.hpp"
#include "run/session.hpp"
#include "vk/devices.hpp"

namespace run {

bool gpu_memory_on_host(const core::TrainConfig& cfg) {
  if (std::find(cfg.backends.begin(), cfg.backends.end(), "gpu") == cfg.backends.end()) return false;
  try {
    const std::vector<vk::DeviceInfo> devices = vk::list_devices();
    const int index = cfg.device >= 0 ? cfg.device : vk::pick_best_device(devices);
    return index >= 0 && index < static_cast<int>(devices.size()) && devices[static_cast<size_t>(index)].software;
  } catch (const core::Error&) {  // no Vulkan: the GPU backend says so itself when it starts
    return false;
  }
}

std::vector<core::NewTrainer> new_trainers(const std::vector<BackendSpec>& specs) {
  std::vector<core::NewTrainer> out;
  for (const BackendSpec& s : specs) out.push_back({s.name, s.host_memory});
  return out;
}

std::vector<BackendSpec> backends_from_config(const core::TrainConfig& cfg,
                                              const std::vector<core::Precision>& compile_ahead) {
  std::vector<BackendSpec> specs;
  for (const auto& name : cfg.backends) {
    if (name == "gpu") {
      // One device cache per GPU backend: its rebuilds (batch size, optimizer, precision) and resets reuse the Vulkan
      // device, the compiled kernels and the uploaded dataset; compiled pipelines are kept on disk in
      // $XDG_CACHE_HOME/trainscope. Only that backend's worker thread uses it (the background compile included).
      auto cache = std::make_shared<gpu::DeviceCache>(gpu::default_cache_dir());
      std::shared_ptr<BackgroundCompile> ahead;
      if (!compile_ahead.empty()) ahead = std::make_shared<BackgroundCompile>(cache, compile_ahead);
      BackendSpec spec{name, [cache, ahead](const core::TrainConfig& c, const core::DataSplit& d,
                                            const std::vector<float>& p) {
                         auto trainer = gpu::make_trainer(c, d, p, cache.get());
                         if (c.input.host()) trainer->set_batch_source(make_loader(c, d));
                         if (ahead) ahead->use_device(vk::ContextOptions{c.device, c.validation});
                         return trainer;
                       },
                     gpu_memory_on_host(cfg)};
      if (ahead) spec.background = [ahead] { return ahead->step(); };
      specs.push_back(std::move(spec));
    } else if (name == "cpu") {
      specs.push_back({name, [](const core::TrainConfig& c, const core::DataSplit& d, const std::vector<float>& p) {
                         auto trainer = cpu::make_trainer(c, d, p);
                         if (c.input.host()) trainer->set_batch_source(make_loader(c, d));
                         return trainer;
                       }});
    } else {
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("--backend {}: unknown backend (allowed: gpu, cpu, or gpu,cpu)", name));
    }
  }
  return specs;
}

}  // namespace run
