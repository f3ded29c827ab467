// app::DashboardApp: `trainscope dashboard`, the live window over both training runs. The pre-flight (options, a
// lesson read and checked whole, the remembered settings), the window and the session, the frame loop (a view built
// each frame, keys, the lesson, drawing on demand, screenshots), the shutdown and its summary on the terminal.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "app/commands.hpp"
#include "app/dashboard_host.hpp"
#include "app/window_cpu.hpp"
#include "core/config.hpp"
#include "run/interrupt.hpp"
#include "run/session.hpp"
#include "run/session_peaks.hpp"
#include "ui/dashboard.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/lesson_runner.hpp"
#include "ui/presenter_keys.hpp"
#include "ui/settings.hpp"
#include "ui/window.hpp"

namespace app {

class DashboardApp {
 public:
  // The pre-flight, before any window opens: the options checked, a lesson read and checked whole, the remembered
  // settings read. Throws core::Error (InvalidArgument: exit 2) for bad input. Ctrl-C / SIGTERM are watched from
  // here on (before any thread exists: run::InterruptWatch).
  DashboardApp(TrainOptions& options, DashboardOptions& display);
  DashboardApp(const DashboardApp&) = delete;
  DashboardApp& operator=(const DashboardApp&) = delete;

  // Opens the window and trains until it is closed, --frames are drawn or a lesson ends; prints the summary and
  // returns the exit code (130 / 143 after Ctrl-C / SIGTERM).
  int run();

 private:
  // Start-up.
  void check_options() const;
  void read_lesson();
  void read_settings();
  void load_data();  // with a lesson before the window, else after it
  void open_window();
  void start_session();
  void announce_lesson();

  // One frame.
  ui::DashboardView make_view();  // the snapshot drawn this frame
  void peaks_view(ui::DashboardView& view);
  bool step_lesson(ui::DashboardView& view);  // false: the loop ends (the lesson quit, or autoplay reached its end)
  bool frame_due(const ui::DashboardView& view, bool input, bool continuous);
  void draw(const ui::DashboardView& view);
  void take_screenshots();
  bool frames_done();  // --frames N drawn (and --screenshot saved, or failed): the loop ends

  // Shutdown.
  void stop_training();
  void remember_settings() const;
  int summary();

  // Declared in the order they were made: destroyed in reverse (the controller and the dashboard before the session,
  // the session before the window, the interrupt watch last).
  TrainOptions& options_;
  DashboardOptions& display_;
  core::TrainConfig& cfg_;
  run::InterruptWatch interrupt_;
  std::optional<ui::LessonRunner> lesson_;
  bool size_given_ = false;  // --size: as given, beating a lesson's size, never shrunk to the screen
  int width_ = 0, height_ = 0;
  std::filesystem::path settings_path_;
  bool first_start_ = false;  // no remembered settings yet (then a small screen gets large type)
  ui::LoadedSettings loaded_;
  ui::Settings settings_;     // the remembered ones with this run's --font-size, --presentation and lesson's
  std::shared_ptr<const core::DataSplit> data_;
  std::unique_ptr<ui::Window> window_;
  run::Observer observer_;  // the window reads snapshots; nothing to print
  std::unique_ptr<run::Session> session_;
  std::unique_ptr<run::SessionPeaks> peaks_;
  ui::DashboardModel model_;
  ui::Dashboard dashboard_;
  std::unique_ptr<DashboardSweep> sweep_;  // the Sweep tab's sweep: stopped before the session goes
  std::unique_ptr<SessionController> controller_;

  // The frame loop's state.
  std::string toast_, title_;
  bool final_shot_ = false;  // --frames N with --screenshot: the last frame is saved
  bool final_requested_ = false, final_done_ = false;
  int exit_code_ = 0;
  // What the window starts with: only what the user changes in the window is remembered, not a --size,
  // --font-size or --presentation given for this run.
  ui::StyleOptions start_style_;
  int start_width_ = 0, start_height_ = 0;
  ui::PresenterKeys keys_{false};  // the teacher's keys: Space, B, P, F11, ?, Esc...
  std::string longest_caption_;    // the caption band is as tall as the lesson's longest caption needs, all along
  WindowCpu window_cpu_;
  double last_draw_s_ = -1, settle_until_s_ = 0, window_cores_ = -1;
  std::string drawn_signature_, view_peaks_said_;
  int frame_ = 0;
};

}  // namespace app
