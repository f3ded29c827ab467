// The honest GPU/CPU speedup: a number only when both sides did the same work per step.
#include "core/speedup.hpp"

#include <fmt/format.h>

namespace core {
namespace {

std::string title(const std::string& name) { return name == "gpu" ? "GPU" : name == "cpu" ? "CPU" : name; }

// Why `run` cannot take part in a live comparison now, or "".
std::string not_training(const BackendRun& run) {
  const std::string who = title(run.name);
  if (!run.error.empty()) return who + " stopped";
  if (run.finished) return who + " finished";
  if (run.building) return who + " is applying a change";
  if (!(run.recent_samples_per_s > 0)) return who + " is measuring";
  return "";
}

}  // namespace

std::string settings_difference(const TrainConfig& a, const TrainConfig& b, const std::string& a_name,
                                const std::string& b_name) {
  std::string out;
  auto differs = [&](const char* what, const std::string& x, const std::string& y) {
    if (x == y) return;
    out += fmt::format("{}{} {} {}, {} {}", out.empty() ? "" : "; ", what, a_name, x, b_name, y);
  };
  differs("dataset", a.dataset, b.dataset);
  differs("hidden layers", hidden_text(a.hidden), hidden_text(b.hidden));
  differs("activation", to_string(a.activation), to_string(b.activation));
  differs("batch", std::to_string(a.batch), std::to_string(b.batch));
  differs("precision", to_string(a.precision), to_string(b.precision));
  differs("optimizer", to_string(a.optimizer), to_string(b.optimizer));
  return out;
}

Speedup live_speedup(const BackendRun& gpu, const BackendRun& cpu) {
  Speedup s;
  for (const BackendRun* r : {&gpu, &cpu}) {
    if (const std::string why = not_training(*r); !why.empty()) {
      s.reason = why;
      return s;
    }
  }
  if (const std::string diff = settings_difference(gpu.config, cpu.config); !diff.empty()) {
    s.reason = "settings differ: " + diff;
    return s;
  }
  s.gpu_rate = gpu.recent_samples_per_s;
  s.cpu_rate = cpu.recent_samples_per_s;
  s.value = s.gpu_rate / s.cpu_rate;
  return s;
}

Speedup run_speedup(const BackendRun& gpu, const BackendRun& cpu) {
  Speedup s;
  for (const BackendRun* r : {&gpu, &cpu}) {
    if (!r->error.empty()) {
      s.reason = title(r->name) + " stopped with an error";
      return s;
    }
    if (r->epochs.empty() || !(r->samples_per_s() > 0)) {
      s.reason = title(r->name) + " did not finish an epoch";
      return s;
    }
  }
  if (const std::string diff = settings_difference(gpu.config, cpu.config); !diff.empty()) {
    s.reason = "settings differ: " + diff;
    return s;
  }
  s.gpu_rate = gpu.samples_per_s();
  s.cpu_rate = cpu.samples_per_s();
  s.value = s.gpu_rate / s.cpu_rate;
  return s;
}

Speedup run_speedup(const std::vector<BackendRun>& runs) {
  const BackendRun *gpu = nullptr, *cpu = nullptr;
  for (const auto& r : runs) {
    if (r.name == "gpu") gpu = &r;
    if (r.name == "cpu") cpu = &r;
  }
  if (!gpu || !cpu) return {0, 0, 0, "both backends must train (--backend gpu,cpu)"};
  return run_speedup(*gpu, *cpu);
}

}  // namespace core
