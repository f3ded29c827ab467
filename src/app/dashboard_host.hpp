// app::SessionController: the dashboard's controls and a lesson's steps, applied to the session (commands, resets),
// the window (style, screenshots) and the dashboard (views); the exports of the Timeline tab.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/dashboard_sweep.hpp"
#include "run/session.hpp"
#include "run/session_peaks.hpp"
#include "ui/dashboard.hpp"
#include "ui/lesson_runner.hpp"
#include "ui/presenter_keys.hpp"
#include "ui/window.hpp"

namespace app {

// The dashboard's controls and a lesson's steps, applied to the session (commands, resets), the window (style,
// screenshots) and the dashboard (views).
class SessionController final : public ui::Controller, public ui::LessonHost {
 public:
  SessionController(run::Session& session, run::SessionPeaks& peaks, ui::Window& window, ui::Dashboard& dashboard,
                    DashboardSweep& sweep)
      : session_(session), peaks_(peaks), window_(window), dashboard_(dashboard), sweep_(sweep) {}
  void post(const run::Command& command) override { session_.post(command); }
  void reset(const core::TrainConfig& config) override { session_.request_reset(config); }
  void request_screenshot() override { shot_ = Shot{}; }
  void set_style(const ui::StyleOptions& style) override { window_.set_style(style); }
  ui::StyleOptions style() const override { return window_.style(); }
  void remeasure_peaks() override { peaks_.measure(false); }
  void set_fair(bool on) override { session_.set_fair(on); }

  std::string export_trace() override;
  std::string export_csv() override;
  void show(const ui::LessonView& v) override;
  void screenshot(const std::string& path) override { shot_ = Shot{path, true, std::nullopt}; }
  void start_sweep() override { sweep_.request_start(); }  // the Sweep tab's button and a lesson's "do": "sweep"
  void stop_sweep() override { sweep_.stop(); }
  void save_sweep() override { sweep_.save(); }
  std::optional<std::string> screenshot_done() override {
    if (!shot_ || !shot_->result) return std::nullopt;
    std::optional<std::string> done = shot_->result;
    shot_.reset();
    return done;
  }

  // A screenshot is wanted (the button, F12 goes through the window itself, or a lesson): its path, "" for the
  // default name. Asked for once; the result comes to saved().
  std::optional<std::string> take_request() {
    if (!shot_ || shot_->requested_from_window) return std::nullopt;
    shot_->requested_from_window = true;
    return shot_->path;
  }
  // The result of the screenshot asked for: "" or the error.
  void saved(const std::string& error) {
    if (shot_ && shot_->lesson) shot_->result = error;
    else shot_.reset();
  }
  // The path the pending request wants ("" for the default), when a request is out.
  std::optional<std::string> pending_path() const {
    if (!shot_ || !shot_->requested_from_window) return std::nullopt;
    return shot_->path;
  }
  // Whether a screenshot is asked for or being saved (the window must draw a frame for it).
  bool pending_screenshot() const { return shot_.has_value(); }
  // Whether the pending request is a lesson's (its picture replaces only a PNG: ui::lesson_screenshot_target_problem).
  bool pending_is_lesson() const { return shot_ && shot_->lesson; }

 private:
  struct Shot {
    std::string path;  // "" for the default name
    bool lesson = false;
    std::optional<std::string> result;  // set when saved: "" or the error
    bool requested_from_window = false;
  };
  run::Session& session_;
  run::SessionPeaks& peaks_;
  ui::Window& window_;
  ui::Dashboard& dashboard_;
  DashboardSweep& sweep_;
  std::optional<Shot> shot_;
};

// The teacher's keys queued by the window since the last frame (ui::Window::take_keys), applied in order: each next
// or back goes to the lesson (`lesson`, or none) and runs the steps it unlocks at once, so that several taps between
// two slow frames move it as many points; P pauses or resumes training, F11 toggles full screen, a quit (confirmed
// during a lesson) closes the window as its close button does. None while a text field has the keyboard.
void apply_keys(const std::vector<ui::Key>& keys, ui::PresenterKeys& state, ui::LessonRunner* lesson,
                const ui::DashboardView& view, SessionController& controller, run::Session& session,
                ui::Window& window);

}  // namespace app
