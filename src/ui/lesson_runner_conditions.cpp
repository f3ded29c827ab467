// Playing a lesson: when a step's condition holds (its backends' steps, the settings applied, a speedup shown, a
// sweep ended, steady figures), and the checks of "expect". (The steps' actions: lesson_runner.cpp.)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/speedup.hpp"
#include "ui/lesson_runner.hpp"

namespace ui {
namespace {

// The runs a lesson's backend key names: "both" every run, else the one of that name (none: empty).
std::vector<const core::BackendRun*> runs_named(const DashboardView& view, const std::string& key) {
  std::vector<const core::BackendRun*> out;
  for (const auto& r : view.runs)
    if (key == "both" || r.name == key) out.push_back(&r);
  return out;
}

}  // namespace

std::string LessonRunner::not_current(const core::BackendRun& run, const DashboardView& view) const {
  if (run.generation < generation_) return "the run from before the reset (not restarted yet)";
  return running_difference(run, settings_of(view.config));
}

bool LessonRunner::steady(const LessonSteady& s, double now_s, const DashboardView& view, std::string& state) {
  Sample sample{now_s, {}, 0};
  const LessonSettings shown = settings_of(view.config);
  for (const auto& r : view.runs) {
    if (!r.error.empty()) continue;  // a failed backend has no figures to wait for
    // After a reset or a new model this lesson asked for, the run before it is not the one meant: until the new
    // one shows, its figures (steady and applied as they are) would be measured under the new step's name.
    if (r.generation < generation_) {
      state = fmt::format("{} not restarted yet", r.name);
      samples_.clear();
      return false;
    }
    if (r.finished) continue;  // a finished backend's figures no longer move
    // Never figures from a span with a rebuild in it, nor with a compilation: the background compile runs between
    // the GPU's steps with its training clock stopped, so its own rate never counts it; but when the backends train
    // at once (not taking turns) it takes cores from the other backend, whose figures it would lower.
    if (r.building || (!view.fair && !r.background.empty())) {
      state = fmt::format("{} is {}", r.name, r.building ? "applying a change" : r.background);
      samples_.clear();
      return false;
    }
    if (r.steps_since_change < s.steps || r.recent_samples_per_s <= 0 || !running_difference(r, shown).empty()) {
      state = fmt::format("{} at {} of {} steps since its last change", r.name, r.steps_since_change, s.steps);
      samples_.clear();
      return false;
    }
    sample.rates.push_back(r.recent_samples_per_s);
  }
  const core::BackendRun *gpu = view.run("gpu"), *cpu = view.run("cpu");
  if (gpu && cpu) {
    const core::Speedup sp = core::live_speedup(*gpu, *cpu);
    sample.speedup = sp.ok() ? sp.value : 0;
  }
  if (!samples_.empty() && samples_.back().rates.size() != sample.rates.size()) samples_.clear();
  samples_.push_back(std::move(sample));
  // The oldest sample kept is the newest one at least `seconds` old: the figures are judged over that span.
  while (samples_.size() > 1 && now_s - samples_[1].now_s >= s.seconds) samples_.pop_front();
  if (now_s - samples_.front().now_s < s.seconds) {
    state = "the figures are settling";
    return false;
  }
  // The spread of each figure over the span: (max - min) / mean.
  double worst = 0;
  std::string what;
  auto spread = [&](auto value, const std::string& name) {
    double lo = INFINITY, hi = 0, sum = 0;
    for (const Sample& x : samples_) {
      const double v = value(x);
      lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
    }
    const double mean = sum / static_cast<double>(samples_.size());
    const double d = mean > 0 ? (hi - lo) / mean : 0;
    if (d >= worst) worst = d, what = name;
  };
  for (size_t i = 0; i < samples_.front().rates.size(); ++i)
    spread([i](const Sample& x) { return x.rates[i]; }, "samples/s");
  if (samples_.front().speedup > 0) spread([](const Sample& x) { return x.speedup; }, "the speedup");
  state = fmt::format("{} moved {:.0f}% over {:g} s (steady: within {:.0f}%)", what, 100 * worst, s.seconds,
                      100 * s.spread);
  return worst <= s.spread;
}

bool LessonRunner::backends_hold(const LessonStep& step, const DashboardView& view, bool& holds, std::string& state) {
  const LessonCondition& c = *step.when;
  for (const auto& [key, bc] : c.backends) {
    const auto runs = runs_named(view, key);
    if (runs.empty()) {
      fail(step, fmt::format("\"when\" names the {} backend, which this session does not train", key));
      return false;
    }
    for (const core::BackendRun* r : runs) {
      if (r->generation < generation_) {  // the run before a reset this lesson asked for: not the one meant
        holds = false;
        state += fmt::format("{}{} not restarted yet", state.empty() ? "" : "; ", r->name);
        continue;
      }
      const long steps = static_cast<long>(r->step_losses.size());
      state += fmt::format("{}{} at step {}, {} since its last change{}{}", state.empty() ? "" : "; ", r->name, steps,
                           r->steps_since_change, r->building ? ", applying a change" : "",
                           r->error.empty() ? "" : ", failed");
      if (bc.step && steps < *bc.step) holds = false;
      if (bc.epoch && static_cast<long>(r->epochs.size()) < *bc.epoch) holds = false;
      // Since a change of the settings shown: once this backend's trainer runs them (a change just posted is not
      // applied yet, and its old trainer's steps do not count).
      if (bc.steps_since_change && (r->steps_since_change < *bc.steps_since_change || !not_current(*r, view).empty()))
        holds = false;
      if (bc.paused && r->paused != *bc.paused) holds = false;
      if (bc.failed && r->error.empty() == *bc.failed) holds = false;
    }
  }
  return true;
}

bool LessonRunner::settled(const LessonStep& step, double now_s, const DashboardView& view) {
  const LessonCondition& c = *step.when;
  std::string moved;
  LessonSteady wanted = *c.steady;
  if (options_.steady) wanted.steps = options_.steady->steps, wanted.seconds = options_.steady->seconds;
  const bool done = steady(wanted, now_s, view, moved);
  waiting_for_ = "settling…";
  if (!done && now_s - waiting_since_s_ >= step.timeout) {  // a steady condition never fails a lesson
    log_.push_back(fmt::format("step {}: the figures did not settle within {:g} s ({}): going on", step.number,
                               step.timeout, moved));
    if (step.measure) measure(step, view, false, moved);
    return true;
  }
  // The figures the picture will show, for the terminal (and the measurements of docs/benchmarks.md).
  if (done) {
    std::string figures;
    for (const auto& r : view.runs)
      figures += fmt::format("{}{} {:.0f} samples/s", figures.empty() ? "" : ", ", r.name, r.recent_samples_per_s);
    const core::BackendRun *gpu = view.run("gpu"), *cpu = view.run("cpu");
    if (gpu && cpu && core::live_speedup(*gpu, *cpu).ok())
      figures += fmt::format(", speedup {:.3f}x", core::live_speedup(*gpu, *cpu).value);
    if (view.window_cores >= 0) figures += fmt::format("; window {:.2f} cores", view.window_cores);
    log_.push_back(fmt::format("step {}: steady: {}{}", step.number, figures, view.fair ? " (taking turns)" : ""));
    if (step.measure) measure(step, view, true, moved);
  }
  return done;
}

bool LessonRunner::triggered(const LessonStep& step, double now_s, const DashboardView& view) {
  waiting_for_.clear();
  if (step.next) {
    if (options_.autoplay) return true;
    if (!next_pressed_) {
      waiting_for_ = "teacher";
      return false;
    }
    next_pressed_ = false;
    return true;
  }
  if (step.at || step.after) waiting_for_ = "waiting…";
  if (step.at) return now_s - start_s_ >= *step.at;
  if (step.after) return now_s - previous_s_ >= *step.after;
  if (!step.when) return true;
  if (waiting_since_s_ < 0) waiting_since_s_ = now_s, samples_.clear();
  const LessonCondition& c = *step.when;
  bool holds = true;
  std::string state;  // where things stand, for a timeout's message
  if (!backends_hold(step, view, holds, state)) return false;
  if (c.applied && *c.applied) {
    for (const auto& r : view.runs) {
      if (const std::string diff = not_current(r, view); !diff.empty()) {
        holds = false;
        state += fmt::format("{}{} runs {}", state.empty() ? "" : "; ", r.name, diff);
      }
    }
  }
  if (c.speedup) {
    const core::BackendRun *gpu = view.run("gpu"), *cpu = view.run("cpu");
    const bool shown = gpu && cpu && core::live_speedup(*gpu, *cpu).ok();
    if (shown != *c.speedup) holds = false;
  }
  if (c.sweep_done) {
    if (view.sweep_busy) sweep_pending_ = false;
    const bool ended =
        !sweep_pending_ && !view.sweep_busy &&
        (view.sweep_status == "done" || view.sweep_status == "stopped" || view.sweep_status.rfind("failed", 0) == 0);
    if (ended != *c.sweep_done) holds = false;
    state += fmt::format("{}sweep {}", state.empty() ? "" : "; ",
                         view.sweep_status.empty() ? "not started" : view.sweep_status);
  }
  waiting_for_ = c.sweep_done ? "sweeping…" : "training…";
  if (c.steady && holds) return settled(step, now_s, view);
  if (!holds && options_.autoplay && now_s - waiting_since_s_ >= step.timeout)
    fail(step, fmt::format("\"when\" did not hold within {:g} s ({})", step.timeout, state.empty() ? "-" : state));
  return holds;
}

bool LessonRunner::check_expect(const LessonStep& step, const DashboardView& view) {
  const LessonExpect& e = *step.expect;
  std::vector<std::string> problems;
  for (const auto& [key, settings] : e.backends) {
    const auto runs = runs_named(view, key);
    if (runs.empty()) problems.push_back(fmt::format("no {} backend in this session", key));
    for (const core::BackendRun* r : runs)
      if (const std::string d = running_difference(*r, settings); !d.empty())
        problems.push_back(fmt::format("{} runs {}", r->name, d));
  }
  if (e.applied)
    for (const auto& r : view.runs)
      if (const std::string d = not_current(r, view); !d.empty())
        problems.push_back(fmt::format("{} does not run the settings shown: {}", r.name, d));
  if (e.figures_current) {
    for (const auto& r : view.runs)
      if (r.kernels.steps_seen() > r.steps_since_change)
        problems.push_back(fmt::format("{}'s kernel timings hold {} steps, but only {} ran since its last change",
                                       r.name, r.kernels.steps_seen(), r.steps_since_change));
    // A speedup is shown only when both trainers (not only their records) run the same work per step.
    const core::BackendRun *gpu = view.run("gpu"), *cpu = view.run("cpu");
    if (gpu && cpu && core::live_speedup(*gpu, *cpu).ok()) {
      LessonSettings same;
      same.batch = gpu->running.batch;
      same.optimizer = gpu->running.optimizer;
      same.precision = gpu->running.precision;
      same.hidden = hidden_of(gpu->running);
      if (const std::string d = running_difference(*cpu, same); !d.empty())
        problems.push_back("a speedup is shown while the CPU runs " + d + " (the GPU's settings)");
    }
  }
  if (e.peaks)
    for (const auto& r : view.runs) {
      const core::RoofCeilings roof = view.roof(r);
      if (roof.bandwidth_gbps <= 0 || roof.compute_gflops <= 0) {
        const core::BackendPeaks* p = view.peaks_of(r.name);
        problems.push_back(fmt::format("{}'s device has no measured peaks{}", r.name,
                                       p && !p->note.empty() ? " (" + p->note + ")" : ""));
      }
    }
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    fail(step, "expected " + all);
    return false;
  }
  log_.push_back(fmt::format("step {}: as expected", step.number));
  return true;
}

}  // namespace ui
