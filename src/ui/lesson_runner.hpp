// ui::LessonRunner: plays a ui::Lesson in the dashboard, one frame at a time: waits for each step's trigger (the
// teacher's next, a time, a condition), sends its commands through the same paths as the controls, shows its caption,
// prints its notes, checks its expectations against what the trainers run, takes its screenshot and quits when told.
// It never waits inside a frame: a screenshot or a condition is looked at again in the next frame.
#pragma once
#include <deque>
#include <filesystem>
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
  virtual void show(const LessonView& view) = 0;            // tab, plot, type size, presentation mode
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

struct LessonOptions {
  // true: unattended (--autoplay): "next" steps run at once, a condition that times out fails the lesson, "quit"
  // ends it. false: the teacher paces it: "next" steps and "quit" wait for next(), conditions wait as long as needed.
  bool autoplay = true;
  std::filesystem::path output = {};  // the folder of the screenshots (their names are joined to it); empty: as named
  // Overrides every steady condition's steps and seconds (--steady N,S; a quick play of a lesson's flow), or none.
  std::optional<LessonSteady> steady = {};
};

class LessonRunner {
 public:
  explicit LessonRunner(Lesson lesson, LessonOptions options = {})
      : lesson_(std::move(lesson)), options_(std::move(options)) {
    view_.tab = lesson_.tab;
    point_views_.push_back(view_);
  }

  // One frame: `now_s` on a steady clock (seconds), `view` what the dashboard shows. Runs every step whose trigger
  // holds now (several in one frame when they follow at once). Lines of what it did go to log().
  void update(double now_s, const DashboardView& view, LessonHost& host);

  // The teacher's keys: next (Space, Right, Page Down) and back (Left, Page Up). Back shows the caption of the point
  // before (the lesson itself goes on); next then comes forward again through those captions before it moves the
  // lesson on. A next while the lesson waits for something else is kept for its next "next" step (one at most).
  void next();
  void back();
  // The quiet hint for the teacher: "3/9 · Space: next", "3/9 · settling…" (waiting for steady figures), "3/9 ·
  // training…", "9/9 · Space: end" (the last step), "2/9 · earlier · Space: on"; "" with autoplay.
  std::string hint() const;

  bool finished() const { return next_ >= lesson_.steps.size() && !waiting_for_screenshot_; }
  // The exit code a "quit" step asked for, or 1 after a failed expectation or a condition's timeout.
  std::optional<int> exit_code() const { return exit_code_; }
  // The figures the lesson's "measure" steps took, and every claim judged so far (the summary slide's rows).
  const std::vector<LessonMeasurement>& measurements() const { return measurements_; }
  const std::vector<LessonSummaryRow>& summary() const { return summary_; }
  // A "summary" step's slide is up (until a later caption or view; not while the teacher looks back).
  bool summary_shown() const { return summary_shown_ && back_ == 0; }
  // The caption to show now ("" for none): the current one, or the earlier one the teacher went back to.
  const std::string& caption() const {
    return back_ > 0 && back_ < shown_captions_.size() ? shown_captions_[shown_captions_.size() - 1 - back_] : caption_;
  }
  // A teacher's lesson that had a failure (said in the log; the lesson went on): its exit code will be 1.
  bool failed() const { return failed_; }
  // What happened since the last call, one line each ("step 3 at 12.4 s: set batch 512"), then cleared.
  std::vector<std::string> take_log() { return std::exchange(log_, {}); }
  const Lesson& lesson() const { return lesson_; }

 private:
  bool triggered(const LessonStep& step, double now_s, const DashboardView& view);
  // The backends' part of a "when": `holds` false where one is not there yet, `state` where each stands. False when
  // the condition names a backend this session does not train (the step failed).
  bool backends_hold(const LessonStep& step, const DashboardView& view, bool& holds, std::string& state);
  // A "when" with "steady" whose other parts hold: whether the figures settled, or the step's timeout passed (a
  // steady condition never fails a lesson); a "measure" step measures then.
  bool settled(const LessonStep& step, double now_s, const DashboardView& view);
  // A step's "expect": true when every expectation holds; else the step failed, saying each that did not.
  bool check_expect(const LessonStep& step, const DashboardView& view);
  // Why `run` is not yet the run the current step means: "" when it is; else that it is the run from before a reset
  // this lesson asked for (BackendRun::generation), or how its trainer's settings differ from the ones shown.
  std::string not_current(const core::BackendRun& run, const DashboardView& view) const;
  // The "steady" part of a condition: whether it holds now; `state` gets how far the figures moved.
  bool steady(const LessonSteady& s, double now_s, const DashboardView& view, std::string& state);
  void run_step(const LessonStep& step, double now_s, const DashboardView& view, LessonHost& host);
  void fail(const LessonStep& step, const std::string& why);
  // A "measure" step's figures, taken from `view` when its steady condition held (settled) or timed out.
  void measure(const LessonStep& step, const DashboardView& view, bool settled, const std::string& moved);
  // A claim step: judges the claim, sets the caption and says the notes of its outcome; a summary row.
  void judge(const LessonStep& step, double now_s);
  void write_summary(const LessonStep& step, LessonHost& host);

  struct Sample {  // one frame's figures, while a steady condition waits
    double now_s;
    std::vector<double> rates;  // samples/s of each backend, in view.runs order
    double speedup;             // 0: none shown
  };

  Lesson lesson_;
  LessonOptions options_;
  size_t next_ = 0;
  int point_ = 1;                            // the point the lesson is at (1 + the "next" steps run)
  bool next_pressed_ = false;                // a next not yet used
  std::vector<std::string> shown_captions_;  // the caption of each point so far (back() walks through them)
  size_t back_ = 0;                          // how many points back the teacher is looking (0: the current caption)
  std::string waiting_for_;                  // what the current step waits for, in words ("": nothing; "teacher")
  std::optional<int> end_code_;              // a teacher's lesson at its "quit": the exit code its next() ends it with
  bool failed_ = false;                      // a teacher's lesson had a failure (it went on; the exit code is 1)
  std::deque<Sample> samples_;
  double start_s_ = -1;          // the first frame's time
  double previous_s_ = 0;        // when the previous step ran (or the start)
  double waiting_since_s_ = -1;  // when the current "when" step began to wait
  bool waiting_for_screenshot_ = false;
  bool sweep_pending_ = false;  // a "do": "sweep" not yet seen running
  int screenshot_step_ = 0;
  std::optional<int> pending_quit_;  // a quit waiting for its step's screenshot
  long generation_ = 0;              // after a reset: the runs before it (BackendRun::generation) count for nothing
  std::string caption_;
  double caption_until_s_ = 0;
  std::optional<int> exit_code_;
  std::vector<std::string> log_;
  std::vector<LessonMeasurement> measurements_;
  std::vector<LessonSummaryRow> summary_;
  bool summary_shown_ = false;
  // The view of each point (tab, plot, the Kernels page), so that going back shows an earlier caption over the view
  // it was written for, and coming forward again the current one; restore_ is shown at the next update().
  LessonView view_;
  std::vector<LessonView> point_views_;
  std::optional<LessonView> restore_;
};

}  // namespace ui
