// Playing a lesson: triggers, actions and the checks of "expect", one frame at a time.
#include "ui/lesson_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/speedup.hpp"

namespace ui {
namespace {

// The runs a lesson's backend key names: "both" every run, else the one of that name (none: empty).
std::vector<const core::BackendRun*> runs_named(const DashboardView& view, const std::string& key) {
  std::vector<const core::BackendRun*> out;
  for (const auto& r : view.runs)
    if (key == "both" || r.name == key) out.push_back(&r);
  return out;
}

std::string step_summary(const LessonStep& s) {
  std::vector<std::string> parts;
  for (const auto& c : s.commands) {
    using K = run::Command::Kind;
    switch (c.kind) {
      case K::SetBatch: parts.push_back(fmt::format("batch {}", c.value)); break;
      case K::SetLearningRate: parts.push_back(fmt::format("lr {:g}", c.lr)); break;
      case K::SetOptimizer: parts.push_back(core::to_string(c.optimizer)); break;
      case K::SetPrecision: parts.push_back(core::to_string(c.precision)); break;
      case K::SetThreads: parts.push_back(fmt::format("{} threads", c.value)); break;
      case K::SetToggle: parts.push_back(fmt::format("{} {}", core::to_string(c.toggle), c.on ? "on" : "off")); break;
      case K::SetInput: parts.push_back("input " + core::to_string(c.input)); break;
      case K::Pause: parts.push_back("pause"); break;
      case K::Resume: parts.push_back("resume"); break;
      case K::SingleStep: parts.push_back("single step"); break;
      case K::Reset: break;
    }
  }
  if (s.reset) parts.push_back("reset");
  if (s.model) parts.push_back("new model");
  if (s.sweep) parts.push_back("sweep");
  if (s.view) parts.push_back("view");
  if (s.next) parts.insert(parts.begin(), "next");
  if (s.caption) parts.push_back(s.caption->empty() ? "caption cleared" : "caption");
  if (s.measure) parts.push_back("measure " + *s.measure);
  if (s.claim) parts.push_back("claim");
  if (s.summary) parts.push_back("summary " + *s.summary);
  if (s.expect) parts.push_back("expect");
  if (s.screenshot) parts.push_back("screenshot " + *s.screenshot);
  if (s.quit) parts.push_back(fmt::format("quit {}", *s.quit));
  if (parts.empty()) parts.push_back(s.when ? "condition held" : "waited");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

void LessonRunner::fail(const LessonStep& step, const std::string& why) {
  log_.push_back(fmt::format("step {} FAILED: {}", step.number, why));
  // Unattended, a failure ends the lesson (exit 1); in front of a class it is said and the lesson goes on.
  if (options_.autoplay)
    exit_code_ = 1;
  else
    failed_ = true;
}

void LessonRunner::next() {
  if (back_ > 0) {  // looking at an earlier caption: forward again first, with that point's view
    --back_;
    const size_t at = shown_captions_.size() - 1 - back_;
    if (back_ == 0)
      restore_ = view_;
    else if (at < point_views_.size())
      restore_ = point_views_[at];
    return;
  }
  if (end_code_) {
    exit_code_ = failed_ && *end_code_ == 0 ? 1 : *end_code_;
    return;
  }
  next_pressed_ = true;
}

void LessonRunner::back() {
  if (back_ + 1 >= shown_captions_.size()) return;
  ++back_;
  // The earlier caption over the view it was written for (its tab and plots), not over the current one.
  const size_t at = shown_captions_.size() - 1 - back_;
  if (at < point_views_.size()) restore_ = point_views_[at];
}

std::string LessonRunner::hint() const {
  if (options_.autoplay || exit_code_) return "";
  const int n = lesson_.points();
  const std::string at = fmt::format("{}/{}", std::max(1, point_ - static_cast<int>(back_)), n);
  if (back_ > 0) return at + " · earlier · Space: on";
  if (end_code_) return at + " · Space: end";
  const bool next_waits = next_ < lesson_.steps.size() && lesson_.steps[next_].next && !waiting_for_screenshot_;
  if (waiting_for_ == "teacher" || (next_waits && !next_pressed_)) return at + " · Space: next";
  if (!waiting_for_.empty()) return at + " · " + waiting_for_ + (next_pressed_ ? " · next noted" : "");
  if (finished()) return at + " · the end";
  return at;
}

bool LessonRunner::steady(const LessonSteady& s, double now_s, const DashboardView& view, std::string& state) {
  Sample sample{now_s, {}, 0};
  const LessonSettings shown = settings_of(view.config);
  for (const auto& r : view.runs) {
    if (r.finished || !r.error.empty()) continue;  // a finished backend's figures no longer move
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
      state += fmt::format("{}{} at step {}, {} since its last change{}", state.empty() ? "" : "; ", r->name, steps,
                           r->steps_since_change, r->building ? ", applying a change" : "");
      if (bc.step && steps < *bc.step) holds = false;
      if (bc.epoch && static_cast<long>(r->epochs.size()) < *bc.epoch) holds = false;
      // Since a change of the settings shown: once this backend's trainer runs them (a change just posted is not
      // applied yet, and its old trainer's steps do not count).
      if (bc.steps_since_change &&
          (r->steps_since_change < *bc.steps_since_change ||
           !running_difference(*r, settings_of(view.config)).empty()))
        holds = false;
      if (bc.paused && r->paused != *bc.paused) holds = false;
    }
  }
  if (c.applied && *c.applied) {
    for (const auto& r : view.runs) {
      const std::string diff = running_difference(r, settings_of(view.config));
      if (!diff.empty()) {
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
    const bool ended = !sweep_pending_ && !view.sweep_busy &&
                       (view.sweep_status == "done" || view.sweep_status == "stopped" ||
                        view.sweep_status.rfind("failed", 0) == 0);
    if (ended != *c.sweep_done) holds = false;
    state += fmt::format("{}sweep {}", state.empty() ? "" : "; ",
                         view.sweep_status.empty() ? "not started" : view.sweep_status);
  }
  waiting_for_ = c.sweep_done ? "sweeping…" : "training…";
  if (c.steady && holds) {
    std::string moved;
    LessonSteady wanted = *c.steady;
    if (options_.steady) wanted.steps = options_.steady->steps, wanted.seconds = options_.steady->seconds;
    const bool settled = steady(wanted, now_s, view, moved);
    waiting_for_ = "settling…";
    if (!settled && now_s - waiting_since_s_ >= step.timeout) {  // a steady condition never fails a lesson
      log_.push_back(fmt::format("step {}: the figures did not settle within {:g} s ({}): going on", step.number,
                                 step.timeout, moved));
      if (step.measure) measure(step, view, false, moved);
      return true;
    }
    // The figures the picture will show, for the terminal (and the measurements of docs/benchmarks.md).
    if (settled) {
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
    return settled;
  }
  if (!holds && options_.autoplay && now_s - waiting_since_s_ >= step.timeout)
    fail(step, fmt::format("\"when\" did not hold within {:g} s ({})", step.timeout, state.empty() ? "-" : state));
  return holds;
}

void LessonRunner::run_step(const LessonStep& step, double now_s, const DashboardView& view, LessonHost& host) {
  const double waited = waiting_since_s_ >= 0 ? now_s - waiting_since_s_ : 0;
  log_.push_back(fmt::format("step {} at {:.2f} s{}: {}", step.number, now_s - start_s_,
                             step.when ? fmt::format(" (its condition held after {:.2f} s)", waited) : "",
                             step_summary(step)));
  waiting_since_s_ = -1;
  previous_s_ = now_s;
  if (step.next) {
    ++point_;
    back_ = 0;
    point_views_.resize(static_cast<size_t>(point_), view_);
  }
  for (const auto& c : step.commands) host.post(c);
  if (step.reset || step.model) {  // the runs from before count for nothing in the steps after
    long newest = 0;
    for (const auto& r : view.runs) newest = std::max(newest, r.generation);
    generation_ = newest + 1;
  }
  // A reset restarts with the settings the controls show, this step's "set" included (the view is from before it).
  core::TrainConfig shown = view.config;
  for (const auto& c : step.commands) run::apply_setting(c, shown);
  if (step.reset) host.reset(shown);
  if (step.model) host.reset(core::apply_settings(shown, *step.model));
  if (step.sweep) {
    host.start_sweep();
    sweep_pending_ = true;  // until a frame shows it busy: "done" before that is the previous sweep's
  }
  if (step.view) {
    host.show(*step.view);
    // What going back to this point shows again: the tab and the plots, not the type size or presentation mode.
    if (step.view->tab) view_.tab = step.view->tab;
    if (step.view->x_seconds) view_.x_seconds = step.view->x_seconds;
    if (step.view->accuracy) view_.accuracy = step.view->accuracy;
    if (step.view->kernels) view_.kernels = step.view->kernels;
    point_views_.resize(static_cast<size_t>(point_), view_);
    point_views_.back() = view_;
  }
  if (step.view || step.caption || step.claim) summary_shown_ = false;
  if (step.claim) {
    judge(step, now_s);  // the caption and notes of the outcome measured
  } else if (step.caption) {
    caption_ = *step.caption;
    caption_until_s_ = step.caption_seconds ? now_s + *step.caption_seconds : INFINITY;
    shown_captions_.resize(static_cast<size_t>(point_));
    shown_captions_.back() = caption_;
  }
  if (step.notes && !step.notes_claim) log_.push_back(fmt::format("notes {}/{}: {}", point_, lesson_.points(), *step.notes));
  if (step.summary) write_summary(step, host);
  if (step.expect) {
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
        if (const std::string d = running_difference(r, settings_of(view.config)); !d.empty())
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
      return;
    }
    log_.push_back(fmt::format("step {}: as expected", step.number));
  }
  if (step.screenshot) {
    host.screenshot(options_.output.empty() ? *step.screenshot : (options_.output / *step.screenshot).string());
    waiting_for_screenshot_ = true;
    screenshot_step_ = step.number;
  }
  if (step.quit) {
    if (!options_.autoplay)
      end_code_ = *step.quit;  // the teacher's next ends it
    else if (waiting_for_screenshot_)
      pending_quit_ = *step.quit;
    else
      exit_code_ = *step.quit;
  }
}

void LessonRunner::update(double now_s, const DashboardView& view, LessonHost& host) {
  if (start_s_ < 0) start_s_ = previous_s_ = now_s;
  if (restore_) host.show(*std::exchange(restore_, std::nullopt));
  if (!caption_.empty() && now_s >= caption_until_s_) caption_.clear();
  if (exit_code_ || end_code_) return;
  if (waiting_for_screenshot_) {
    const std::optional<std::string> done = host.screenshot_done();
    if (!done) return;
    waiting_for_screenshot_ = false;
    previous_s_ = now_s;
    if (!done->empty()) {
      log_.push_back(fmt::format("step {} FAILED: {}", screenshot_step_, *done));
      if (options_.autoplay) {
        exit_code_ = 1;
        return;
      }
      failed_ = true;
    }
    if (pending_quit_) exit_code_ = std::exchange(pending_quit_, std::nullopt);
  }
  waiting_for_.clear();
  while (next_ < lesson_.steps.size() && !waiting_for_screenshot_ && !exit_code_ && !end_code_) {
    const LessonStep& step = lesson_.steps[next_];
    if (!triggered(step, now_s, view)) break;
    ++next_;
    run_step(step, now_s, view, host);
    // A change made this frame shows in the next frame's view: the following steps look at that one (a "when
    // applied" right after a "set" must not compare with the settings before it).
    if (!step.commands.empty() || step.reset || step.model || step.view) break;
  }
}

}  // namespace ui
