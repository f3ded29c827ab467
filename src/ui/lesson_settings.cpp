// Lesson settings against what a backend runs: settings_of (the controls' settings as a lesson's) and
// running_difference (what a backend's trainer runs that differs from them), for the lesson runner's conditions.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/config.hpp"
#include "ui/lesson_runner.hpp"

namespace ui {

LessonSettings settings_of(const core::TrainConfig& c) {
  LessonSettings s;
  s.batch = c.batch;
  s.lr = c.lr;
  s.optimizer = c.optimizer;
  s.precision = c.precision;
  // A transformer has no hidden-layer setting: its running layer widths (blocks x its dense layers) are compared
  // with nothing (its sizes are Reset settings, applied by a new model).
  if (c.model != core::ModelKind::Transformer) s.hidden = c.hidden;
  s.activation = c.activation;
  s.execution = c.execution;
  s.input = c.input;
  return s;
}

std::string running_difference(const core::BackendRun& run, const LessonSettings& s) {
  const core::BackendRun::Running& r = run.running;
  std::string out;
  auto differs = [&](const std::string& what, const std::string& is, const std::string& wanted) {
    if (is != wanted) out += fmt::format("{}{} {}, not {}", out.empty() ? "" : "; ", what, is, wanted);
  };
  if (run.building) out = "a change is still being applied";
  if (s.batch) differs("batch", std::to_string(r.batch), std::to_string(*s.batch));
  if (s.lr) differs("lr", fmt::format("{:g}", r.lr), fmt::format("{:g}", *s.lr));
  if (s.optimizer) differs("optimizer", core::to_string(r.optimizer), core::to_string(*s.optimizer));
  if (s.precision) differs("precision", core::to_string(r.precision), core::to_string(*s.precision));
  if (s.activation) differs("activation", core::to_string(r.activation), core::to_string(*s.activation));
  if (s.execution) differs("execution", core::to_string(r.execution), core::to_string(*s.execution));
  if (s.input) differs("input", core::to_string(r.input), core::to_string(*s.input));
  if (s.hidden) differs("hidden layers", core::hidden_text(hidden_of(r)), core::hidden_text(*s.hidden));
  return out;
}

}  // namespace ui
