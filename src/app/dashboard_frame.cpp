// app::DashboardApp (dashboard_app.hpp): the pieces of one frame of the dashboard: the view built from the session's
// snapshot, the lesson's step, whether a frame is due, the drawing, the screenshots and the end of --frames.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "app/dashboard_app.hpp"
#include "app/dashboard_run.hpp"
#include "app/print.hpp"
#include "core/measure.hpp"
#include "ui/screenshot.hpp"

namespace app {
namespace {

std::string window_title(const std::vector<core::BackendRun>& runs) {
  std::string title = "trainscope";
  for (const auto& r : runs)
    if (!r.device.empty()) title += fmt::format("  |  {}: {}", ui::backend_title(r.name), r.device);
  return title;
}

}  // namespace

ui::DashboardView DashboardApp::make_view() {
  ui::DashboardView view;
  view.runs = session_->snapshot();
  model_.update(view.runs);
  view.model = &model_;
  view.config = session_->settings();  // what the controls show: what a Reset restarts with
  view.pause_requested = session_->pause_requested();
  view.session_status = session_->status();
  view.live = true;
  view.now_s = core::monotonic_seconds();
  view.fair = session_->fair();
  if (const double cores = window_cpu_.sample(view.now_s); cores >= 0) window_cores_ = cores;
  view.window_cores = window_cores_;
  const ui::FrameStats stats = window_->frame_stats();
  view.ui_frame_ms = stats.last_ms;
  view.ui_frame_p95_ms = stats.p95_ms;
  sweep_->update(view);  // a requested sweep starts; an ended one resumes training
  view.sweep = sweep_->state();
  view.sweep_busy = sweep_->busy();
  view.sweep_status = view.sweep.status;
  view.sweep_saved = sweep_->saved();
  peaks_view(view);
  return view;
}

void DashboardApp::peaks_view(ui::DashboardView& view) {
  run::SessionPeaks::State peaks_state = peaks_->state();
  view.peaks = std::move(peaks_state.backends);
  view.peaks_measuring = peaks_state.measuring;
  view.peaks_training_between = peaks_state.training_between;
  view.peaks_stage = std::move(peaks_state.stage);
  if (peaks_state.message != view_peaks_said_ && !peaks_state.message.empty())  // once, in the terminal too
    say("peaks: {}\n", view_peaks_said_ = peaks_state.message);
  view.peaks_message = std::move(peaks_state.message);
}

bool DashboardApp::step_lesson(ui::DashboardView& view) {
  lesson_->update(view.now_s, view, *controller_);
  for (const auto& line : lesson_->take_log()) say("lesson: {}\n", line);
  flush(stdout);
  view.caption = lesson_->caption();
  view.caption_hint = lesson_->hint();
  view.caption_reserve = longest_caption_;
  view.summary_shown = lesson_->summary_shown();
  if (view.summary_shown) view.summary = lesson_->summary(), view.summary_title = lesson_->lesson().title;
  if (lesson_->exit_code()) {
    exit_code_ = *lesson_->exit_code();
    return false;
  }
  if (display_.autoplay && lesson_->finished()) {  // no "quit" step: an unattended run must end all the same
    std::cerr << "trainscope: warning: " << display_.script
              << ": the lesson has no \"quit\" step; --autoplay closes the window after its last step\n";
    return false;
  }
  return true;
}

bool DashboardApp::frame_due(const ui::DashboardView& view, bool input, bool continuous) {
  if (input) settle_until_s_ = view.now_s + kSettleSeconds;
  const std::string signature = view_signature(view, toast_);
  const bool shot_wanted = controller_->pending_screenshot() || final_requested_;
  const bool due = continuous || input || view.now_s < settle_until_s_ || shot_wanted || last_draw_s_ < 0 ||
                   (signature != drawn_signature_ && view.now_s - last_draw_s_ >= 1.0 / kDataFps) ||
                   view.now_s - last_draw_s_ >= 1.0;
  if (!due) return false;
  last_draw_s_ = view.now_s;
  drawn_signature_ = signature;
  return true;
}

void DashboardApp::draw(const ui::DashboardView& view) {
  if (const std::string t = window_title(view.runs); t != title_) window_->set_title(title_ = t);
  window_->set_footer(ui::Dashboard::footer(view));
  window_->frame([&] {
    dashboard_.draw(view, controller_.get(), toast_);
    if (keys_.draw() == ui::KeyAction::Quit) window_->request_close();  // blank screen, help, "quit the lesson?"
  });
}

void DashboardApp::take_screenshots() {
  if (controller_->take_request() && !window_->request_screenshot()) {
    toast_ = "screenshot: not possible now (one is still being saved, or this window cannot be read back)";
    controller_->saved(toast_);
  }
  auto shot = window_->take_screenshot_result();
  if (!shot) return;
  const bool is_final = final_requested_ && !final_done_;
  const std::string path = is_final ? display_.screenshot : controller_->pending_path().value_or("");
  // A lesson's picture replaces only a PNG (checked again now: the folder may have changed since the start).
  const std::string refused = controller_->pending_is_lesson() ? ui::lesson_screenshot_target_problem(path) : "";
  const ui::SavedScreenshot saved =
      refused.empty() ? ui::save_screenshot(*shot, path) : ui::SavedScreenshot{path, refused};
  toast_ = saved.error.empty() ? "screenshot saved: " + saved.path : "screenshot failed: " + saved.error;
  std::cerr << "trainscope: " << toast_ << "\n";
  if (is_final) {
    final_done_ = true;
    if (!saved.error.empty()) exit_code_ = 1;
  } else {
    controller_->saved(saved.error);
  }
}

// --frames N: stop after N frames; with --screenshot, once that frame has been read back and saved.
bool DashboardApp::frames_done() {
  if (display_.frames == 0 || frame_ < display_.frames) return false;
  if (!final_shot_ || final_done_) return true;
  if (!final_requested_) {
    final_requested_ = window_->request_screenshot();
    if (!final_requested_) {
      std::cerr << "trainscope: error: --screenshot: this window's images cannot be read back\n";
      exit_code_ = 1;
      return true;
    }
  }
  if (frame_ >= display_.frames + 30) {  // a read-back that never completes must not hang a script
    std::cerr << "trainscope: error: --screenshot: the frame was not read back\n";
    exit_code_ = 1;
    return true;
  }
  return false;
}

}  // namespace app
