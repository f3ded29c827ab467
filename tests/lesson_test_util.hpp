// Shared by the lesson tests (test_app_lesson*.cpp): a lesson parsed from text (its error, if any), backend records as
// a worker publishes them, a fake host that records what a lesson does, and a view of both.
#pragma once
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ui/lesson.hpp"
#include "ui/lesson_runner.hpp"

namespace test {

inline std::string parse_error(const std::string& text) {
  try {
    ui::parse_lesson(text, "l.json");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    return e.what();
  }
  return "";
}

// A backend's record as a worker publishes it: running `cfg` for `steps` steps since its last change.
inline core::BackendRun run_of(const std::string& name, const core::TrainConfig& cfg, long steps, long generation = 1) {
  core::BackendRun r;
  r.name = name;
  r.config = cfg;
  r.running.dims = {784};
  r.running.dims.insert(r.running.dims.end(), cfg.hidden.begin(), cfg.hidden.end());
  r.running.dims.push_back(10);
  r.running.batch = cfg.batch;
  r.running.activation = cfg.activation;
  r.running.optimizer = cfg.optimizer;
  r.running.precision = cfg.precision;
  r.running.lr = cfg.lr;
  r.step_losses.assign(static_cast<size_t>(steps), 1.0f);
  r.steps_since_change = steps;
  r.generation = generation;
  return r;
}

struct FakeHost : ui::LessonHost {
  std::vector<run::Command> posted;
  std::vector<core::TrainConfig> resets;
  std::vector<ui::LessonView> views;
  std::vector<std::string> shots;
  std::optional<std::string> shot_result;  // what screenshot_done() returns next
  int sweeps = 0;
  void post(const run::Command& c) override { posted.push_back(c); }
  void reset(const core::TrainConfig& c) override { resets.push_back(c); }
  void show(const ui::LessonView& v) override { views.push_back(v); }
  void screenshot(const std::string& path) override { shots.push_back(path); }
  std::optional<std::string> screenshot_done() override { return std::exchange(shot_result, std::nullopt); }
  void start_sweep() override { ++sweeps; }
};

inline ui::DashboardView view_of(const core::TrainConfig& settings, std::vector<core::BackendRun> runs) {
  ui::DashboardView v;
  v.config = settings;
  v.runs = std::move(runs);
  v.live = true;
  return v;
}

}  // namespace test
