// app::DashboardSweep (see dashboard_sweep.hpp).
#include "app/dashboard_sweep.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/files.hpp"
#include "run/data.hpp"
#include "run/session.hpp"
#include "run/sweep.hpp"
#include "ui/screenshot.hpp"

namespace app {

void DashboardSweep::start(const ui::DashboardView& view) {
  run::SweepOptions o;
  o.config = view.config;
  o.config.validation = false;
  // The CPU with all its hardware threads (the reference for the crossover, as training runs it) and with one:
  // how far the CPU's speed comes from its cores.
  if (const int hw = static_cast<int>(std::thread::hardware_concurrency()); hw > 1) o.cpu_threads = {hw, 1};
  run::LiveSweepHooks hooks;
  hooks.post = post_;
  hooks.training_paused = [paused = training_paused_] { return paused->load(); };
  hooks.training_was_paused = view.pause_requested;
  const core::TrainConfig cfg = o.config;
  saved_.clear();
  sweep_.start(std::move(o), [cfg] { return run::load_data(cfg); }, run::backends_from_config(cfg), std::move(hooks),
               /*lower_priority=*/true);
}

void DashboardSweep::save() {
  const run::LiveSweepState s = sweep_.state();
  if (s.running || s.result.points.empty()) return;
  std::string stem;
  try {
    stem = ui::default_screenshot_path();
    stem = stem.substr(0, stem.size() - 4) + "-sweep";  // "screenshots/trainscope-YYYYMMDD-HHMMSS-sweep"
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(stem).parent_path(), ec);
    core::write_file_atomically(stem + ".json", run::sweep_json(s.options, s.result).dump(2) + "\n", "the sweep report");
    core::write_file_atomically(stem + ".csv", run::sweep_csv(s.result), "the sweep CSV");
    saved_ = "saved " + stem + ".json and .csv";
  } catch (const std::exception& e) {
    saved_ = std::string("not saved: ") + e.what();
  }
}

void DashboardSweep::update(const ui::DashboardView& view) {
  bool paused = true;
  for (const auto& r : view.runs) paused = paused && (r.paused || r.finished || !r.error.empty());
  training_paused_->store(paused);
  sweep_.poll();  // an ended sweep: training resumes (unless it was paused before)
  if (start_requested_ && view.live && !sweep_.running()) start(view);
  start_requested_ = false;
}

}  // namespace app
