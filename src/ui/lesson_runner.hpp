// ui::LessonRunner: plays a ui::Lesson in the dashboard, one frame at a time: waits for each step's trigger, sends its
// commands through the same paths as the controls, shows its caption, checks its expectations against what the
// trainers run, takes its screenshot and quits when told. It never waits inside a frame: a screenshot or a condition
// is looked at again in the next frame.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ui/dashboard_model.hpp"
#include "ui/lesson.hpp"

namespace ui {

// What a lesson drives: the dashboard app implements it over the session, the window and the dashboard.
class LessonHost {
 public:
  virtual ~LessonHost() = default;
  virtual void post(const run::Command& command) = 0;
  virtual void reset(const core::TrainConfig& config) = 0;  // training starts again with `config`
  virtual void show(const LessonView& view) = 0;             // tab, plot, type size, presentation mode
  // Asks for the next frame as a PNG at `path`; screenshot_done() says when it was saved (with its error, "" if none).
  virtual void screenshot(const std::string& path) = 0;
  virtual std::optional<std::string> screenshot_done() = 0;
  virtual void start_sweep() {}  // the Sweep tab's sweep, as its Run sweep button (a lesson's "do": "sweep")
};

// Whether `run`'s trainer runs `s` (every field given), read from BackendRun::running; "" when it does, else what
// differs, e.g. "batch 128, not 512".
std::string running_difference(const core::BackendRun& run, const LessonSettings& s);

// `settings` (the controls' truth) as LessonSettings: what every backend's trainer must run once it has applied them.
LessonSettings settings_of(const core::TrainConfig& settings);

class LessonRunner {
 public:
  explicit LessonRunner(Lesson lesson) : lesson_(std::move(lesson)) {}

  // One frame: `now_s` on a steady clock (seconds), `view` what the dashboard shows. Runs every step whose trigger
  // holds now (several in one frame when they follow at once). Lines of what it did go to log().
  void update(double now_s, const DashboardView& view, LessonHost& host);

  bool finished() const { return next_ >= lesson_.steps.size() && !waiting_for_screenshot_; }
  // The exit code a "quit" step asked for, or 1 after a failed expectation or a condition's timeout.
  std::optional<int> exit_code() const { return exit_code_; }
  // The caption to show now ("" for none).
  const std::string& caption() const { return caption_; }
  // What happened since the last call, one line each ("step 3 at 12.4 s: set batch 512"), then cleared.
  std::vector<std::string> take_log() { return std::exchange(log_, {}); }
  const Lesson& lesson() const { return lesson_; }

 private:
  bool triggered(const LessonStep& step, double now_s, const DashboardView& view);
  void run_step(const LessonStep& step, double now_s, const DashboardView& view, LessonHost& host);
  void fail(const LessonStep& step, const std::string& why);

  Lesson lesson_;
  size_t next_ = 0;
  double start_s_ = -1;          // the first frame's time
  double previous_s_ = 0;        // when the previous step ran (or the start)
  double waiting_since_s_ = -1;  // when the current "when" step began to wait
  bool waiting_for_screenshot_ = false;
  bool sweep_pending_ = false;   // a "do": "sweep" not yet seen running
  int screenshot_step_ = 0;
  std::optional<int> pending_quit_;  // a quit waiting for its step's screenshot
  long generation_ = 0;              // after a reset: the runs before it (BackendRun::generation) count for nothing
  std::string caption_;
  double caption_until_s_ = 0;
  std::optional<int> exit_code_;
  std::vector<std::string> log_;
};

}  // namespace ui
