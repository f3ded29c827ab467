// The dashboard's run-time choices (dashboard_run.hpp).
#include "app/dashboard_run.hpp"

#include <fmt/format.h>

#include <thread>

#include "core/error.hpp"
#include "core/options.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

// The settings as one line of text (a part of the view's signature).
std::string settings_text(const core::TrainConfig& c) {
  return fmt::format("{} {} {} {} {} {} {:g} {} {}", c.dataset, core::hidden_text(c.hidden),
                     core::to_string(c.activation), c.batch, core::to_string(c.precision),
                     core::to_string(c.optimizer), c.lr, c.threads, core::to_string(c.execution));
}

}  // namespace

std::string view_signature(const ui::DashboardView& v, const std::string& toast) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", v.session_status, v.pause_requested, v.fair,
                              v.peaks_measuring, v.peaks_stage, v.peaks_message, v.sweep_busy, v.sweep_status,
                              v.caption, v.caption_hint, toast, settings_text(v.config));
  for (const auto& r : v.runs)
    s += fmt::format("|{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:{}", r.name, r.step_losses.size(), r.updated_s, r.building,
                     r.build_stage, r.status, r.error, r.paused, r.finished, r.background, r.device);
  return s;
}

bool fair_by_default(const core::TrainConfig& cfg) {
  if (cfg.backends.size() < 2 || cfg.sequential) return false;
  if (std::thread::hardware_concurrency() <= 4) return true;
  try {
    const std::vector<vk::DeviceInfo> devices = vk::list_devices();
    const int index = cfg.device >= 0 ? cfg.device : vk::pick_best_device(devices);
    return index >= 0 && static_cast<size_t>(index) < devices.size() &&
           devices[static_cast<size_t>(index)].software;
  } catch (const core::Error&) {
    return false;
  }
}

std::vector<core::Precision> compile_ahead(const core::TrainConfig& cfg, const ui::Lesson* autoplay) {
  std::vector<core::Precision> out;
  for (core::Precision p : {core::Precision::FP16, core::Precision::BF16, core::Precision::FP32}) {
    bool used = autoplay == nullptr || p == cfg.precision;
    if (autoplay)
      for (const auto& step : autoplay->steps)
        for (const auto& c : step.commands)
          used = used || (c.kind == run::Command::Kind::SetPrecision && c.precision == p);
    if (used && p != cfg.precision) out.push_back(p);
  }
  out.push_back(cfg.precision);
  return out;
}

std::optional<ui::LessonSteady> parse_steady(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const size_t comma = text.find(',');
  static constexpr core::IntRule steps{"--steady", "the steps of a steady condition", 1, 1000000};
  static constexpr core::RealRule seconds{"--steady", "the seconds of a steady condition", 0, 600};
  if (comma == std::string::npos)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--steady {}: give STEPS,SECONDS, e.g. 4,0.5", text));
  ui::LessonSteady s;
  s.steps = static_cast<long>(core::parse_int(text.substr(0, comma), steps));
  s.seconds = core::parse_real(text.substr(comma + 1), seconds);
  return s;
}

}  // namespace app
