// Playing a lesson, one frame at a time: the steps' actions, the teacher's keys, the hint. (When a step's condition
// holds, and the checks of "expect": lesson_runner_conditions.cpp.)
#include "ui/lesson_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/speedup.hpp"

namespace ui {
namespace {

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
  if (step.expect && !check_expect(step, view)) return;
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
