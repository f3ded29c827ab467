// app::DashboardApp (dashboard_app.hpp): `trainscope dashboard`'s start-up, its run and shutdown; the pieces of one
// frame are in dashboard_frame.cpp.
#include "app/dashboard_app.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "app/dashboard_run.hpp"
#include "app/print.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/measure.hpp"
#include "core/memory_budget.hpp"
#include "core/options.hpp"
#include "run/data.hpp"
#include "run/explain.hpp"
#include "run/peaks.hpp"
#include "run/preflight.hpp"
#include "ui/screenshot.hpp"
#include "vk/device.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

// What to do when the window cannot open: only without a display does xvfb-run help; with one (under Xvfb too) the
// usual cause is Vulkan itself (no driver), which the message then names.
std::string window_advice(const std::string& failure) {
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  const std::string headless = "use `trainscope train` (with --screenshot FILE.png for the dashboard as a picture)";
  if (!(x11 && *x11) && !(wayland && *wayland))
    return fmt::format("There is no display (DISPLAY is not set): {}, or run the window under xvfb-run", headless);
  if (failure.find("glfwInit failed") != std::string::npos)  // GLFW could not connect to the display
    return fmt::format("The display {} cannot be opened: {}, or run the window under xvfb-run",
                       x11 && *x11 ? x11 : wayland, headless);
  try {
    if (vk::list_devices().empty()) return fmt::format("Vulkan lists no device here: {}", headless);
  } catch (const core::Error& v) {
    return fmt::format("The display is there but Vulkan is not: {}. Until then, {}", v.what(), headless);
  }
  return fmt::format("The display and a Vulkan device are there, but they could not be used together; {}",
                     headless);
}

}  // namespace

// ---- Start-up -------------------------------------------------------------------------------------------------------

DashboardApp::DashboardApp(TrainOptions& options, DashboardOptions& display)
    : options_(options),
      display_(display),
      cfg_(options.config),
      // Ctrl-C / SIGTERM close the window as its close button does (training stopped, settings saved); a second
      // signal exits at once. Before any thread exists (see InterruptWatch).
      interrupt_([](int signal) {
        std::cerr << fmt::format("trainscope: {}: closing the dashboard (again to quit at once)\n",
                                 run::InterruptWatch::name(signal));
      }) {
  finish_config(options_);
  check_options();
  read_lesson();
  read_settings();
  keys_ = ui::PresenterKeys(lesson_.has_value());
}

void DashboardApp::check_options() const {
  const DashboardOptions& d = display_;
  // Checked already as text (app/option_checks.hpp); again here for callers that fill DashboardOptions directly.
  core::check(core::rules::frames, d.frames);
  core::check(core::rules::max_fps, d.max_fps);
  if (d.font_size != 0) core::check(core::rules::font_size, d.font_size);
  static_assert(core::rules::font_size.min == ui::kMinFontSize && core::rules::font_size.max == ui::kMaxFontSize);
  if (!d.screenshot.empty()) {
    if (d.frames == 0)  // it is written after the last of --frames; without them it never was, silently
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("--screenshot {}: needs --frames N (the last of N frames is written); in the "
                                    "window, F12 or the Screenshot button saves one",
                                    d.screenshot));
    core::check_output_path(d.screenshot, "--screenshot");
  }
  if (d.script.empty() && (d.autoplay || !d.output.empty() || !d.steady.empty()))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("{}: goes with --script LESSON.json (a lesson to play)",
                                  d.autoplay ? "--autoplay" : !d.output.empty() ? "--output" : "--steady"));
}

// A lesson is read and checked whole before anything else: a malformed one is refused before the window opens.
void DashboardApp::read_lesson() {
  const DashboardOptions& d = display_;
  const std::optional<ui::LessonSteady> steady = parse_steady(d.steady);
  size_given_ = !options_.size.empty();
  if (!d.script.empty()) {
    ui::Lesson l = ui::load_lesson(d.script);
    cfg_ = l.apply(cfg_);
    core::validate(cfg_);
    if (l.size && !size_given_) options_.size = *l.size;
    const std::filesystem::path output =
        d.output.empty() ? ui::default_lesson_output(d.script) : std::filesystem::path(d.output);
    ui::check_lesson_output(l, output);
    lesson_.emplace(std::move(l), ui::LessonOptions{d.autoplay, output, steady});
  }
  if (!options_.size.empty()) parse_size(options_.size, width_, height_);
}

void DashboardApp::read_settings() {
  settings_path_ = ui::default_settings_path();
  std::error_code no_file;
  first_start_ = settings_path_.empty() || !std::filesystem::exists(settings_path_, no_file);
  loaded_ = ui::load_settings(settings_path_);
  if (!loaded_.warning.empty()) std::cerr << "trainscope: warning: " << loaded_.warning << "\n";
  if (options_.size.empty()) width_ = loaded_.settings.window_width, height_ = loaded_.settings.window_height;
  settings_ = loaded_.settings;
  if (display_.font_size > 0) settings_.font_size = display_.font_size;
  if (display_.presentation) settings_.presentation = true;
  if (lesson_) {
    const ui::Lesson& l = lesson_->lesson();
    if (l.presentation) settings_.presentation = *l.presentation;
    if (l.font_size) settings_.font_size = *l.font_size;
    if (l.tab) settings_.tab = *l.tab;
  }
}

void DashboardApp::load_data() {
  data_ = std::make_shared<const core::DataSplit>(run::load_data(cfg_));
  // With the window and a screenshot of it (F12 at any time), in the one budget: issue 34's 16384x16384.
  run::PreflightOptions check;
  check.extra = core::picture_memory_need(width_, height_, "the window and a screenshot of it,");
  run::preflight(cfg_, *data_, run::new_trainers(run::backends_from_config(cfg_)), check);
  if (lesson_) ui::check_lesson_settings(lesson_->lesson(), cfg_, *data_);
}

void DashboardApp::open_window() {
  ui::WindowOptions wo;
  wo.title = "trainscope";
  wo.width = width_;
  wo.height = height_;
  wo.device_index = cfg_.device;
  wo.max_fps = display_.max_fps;
  wo.fit_work_area = !size_given_;  // a remembered or a lesson's size never opens beyond the screen
  wo.large_type_on_small_screens = first_start_ && display_.font_size == 0 && !display_.presentation &&
                                   !(lesson_ && (lesson_->lesson().font_size || lesson_->lesson().presentation));
  wo.style = settings_.style();
  try {
    window_ = std::make_unique<ui::Window>(wo);
  } catch (const core::Error& e) {
    throw core::Error(e.kind(),
                      fmt::format("{}. {}", run::explain(e, run::Doing::Rendering), window_advice(e.what())));
  }
}

void DashboardApp::start_session() {
  run::SessionOptions session_options;
  session_options.keep_alive = true;
  session_options.lower_priority = true;  // the window first (and app::WindowCpu tells its threads by their nice 0)
  session_options.fair = fair_by_default(cfg_);
  // --frames measures the window's frames: no background compile beside them.
  const std::vector<core::Precision> ahead =
      display_.frames > 0 ? std::vector<core::Precision>{}
                          : compile_ahead(cfg_, lesson_ && display_.autoplay ? &lesson_->lesson() : nullptr);
  session_ = std::make_unique<run::Session>(cfg_, data_, run::backends_from_config(cfg_, ahead), observer_,
                                            session_options);
  const double load_before = core::load_average();  // the machine's, before this session trains
  session_->start();
  // The devices' peaks from the cache. A device missing from it (or measured under load, while the machine is quiet
  // now) is measured between turns: training starts at once and runs between the figures, each figure measured with
  // training paused (never under load), so that the first minute shows training, not a pause. A lesson played
  // unattended measures all at once first, so that no picture says "no peak"; --frames (a frame-time measurement)
  // does not measure and says "not measured" instead.
  peaks_ = std::make_unique<run::SessionPeaks>(*session_, cfg_.backends, cfg_.device, core::default_peaks_path(),
                                               run::SessionPeaks::Measure{}, load_before);
  if (peaks_->missing() && display_.frames == 0)
    peaks_->measure(true, lesson_ && display_.autoplay ? std::nullopt
                                                       : std::optional<run::BetweenTurns>(run::BetweenTurns{}));
  dashboard_.load(settings_);
  sweep_ = std::make_unique<DashboardSweep>([session = session_.get()](const run::Command& c) { session->post(c); });
  controller_ = std::make_unique<SessionController>(*session_, *peaks_, *window_, dashboard_, *sweep_);
  final_shot_ = display_.frames > 0 && !display_.screenshot.empty();
  start_style_ = window_->style();
  start_width_ = window_->width(), start_height_ = window_->height();
}

void DashboardApp::announce_lesson() {
  if (!lesson_) return;
  const ui::Lesson& l = lesson_->lesson();
  say("lesson: {} ({} steps, {} points{})\n", l.title, l.steps.size(), l.points(),
      display_.autoplay ? ", autoplay"
                        : "; Space, Right or Page Down: next; Left or Page Up: the caption before; ?: all keys");
  for (const auto& step : l.steps) {
    if (step.caption && step.caption->size() > longest_caption_.size()) longest_caption_ = *step.caption;
    if (step.caption_claim)  // a claim's texts, with room for the figures filled in
      for (const std::string* t : {&step.caption_claim->yes, &step.caption_claim->no, &step.caption_claim->even})
        if (t->size() + 16 > longest_caption_.size()) longest_caption_ = *t + std::string(16, 'x');
  }
}

// ---- The frame loop -------------------------------------------------------------------------------------------------

// Rendering on demand: a frame when the user does something (then at up to --max-fps for a moment, so that ImGui
// settles), when the figures change (at most kDataFps times a second: the trainers read back 4 times a second),
// and once a second otherwise (ages, timers). --frames draws every frame, as a frame-time measurement.
int DashboardApp::run() {
  // With a lesson the data comes first (its batch sizes are checked against it before the window opens); without
  // one the window does, so that a missing display is said at once.
  if (lesson_) load_data();
  open_window();
  if (!data_) load_data();
  start_session();
  announce_lesson();
  while (!window_->should_close() && !interrupt_.signal()) {
    const bool continuous = display_.frames > 0;
    const bool input = window_->wait_for_input(continuous ? 0.0 : kPollSeconds);
    ui::DashboardView view = make_view();
    apply_keys(window_->take_keys(), keys_, lesson_ ? &*lesson_ : nullptr, view, *controller_, *session_,
               *window_);
    if (lesson_ && !step_lesson(view)) break;
    if (!frame_due(view, input, continuous)) continue;
    draw(view);
    take_screenshots();
    ++frame_;
    if (frames_done()) break;
  }
  stop_training();
  remember_settings();
  return summary();
}

// ---- Shutdown -------------------------------------------------------------------------------------------------------

void DashboardApp::stop_training() {
  peaks_.reset();  // abandons a measurement at its next figure
  session_->request_stop();
  session_->wait();
}

// A lesson's window settings (presentation mode, a tab) are its own: the teacher's remembered ones stay. Otherwise
// what the user changed in the window is remembered; what the command line gave for this run is not.
void DashboardApp::remember_settings() const {
  if (lesson_) return;
  ui::Settings remembered = loaded_.settings;
  dashboard_.save(remembered);
  if (window_->style().font_size != start_style_.font_size) remembered.font_size = window_->style().font_size;
  if (window_->style().presentation != start_style_.presentation)
    remembered.presentation = window_->style().presentation;
  if (!window_->full_screen() && (window_->width() != start_width_ || window_->height() != start_height_))
    remembered.window_width = window_->width(), remembered.window_height = window_->height();
  if (const std::string error = ui::save_settings(remembered, settings_path_); !error.empty())
    std::cerr << "trainscope: warning: settings not saved: " << error << "\n";
}

// The frame times, a backend's error, the validation layers' count; the exit code.
int DashboardApp::summary() {
  // A teacher's lesson that went on past a failure.
  if (lesson_ && lesson_->failed() && exit_code_ == 0) exit_code_ = 1;
  const ui::FrameStats stats = window_->frame_stats();
  say("UI frame time: mean {:.1f} ms, p95 {:.1f} ms, max {:.1f} ms over {} frames\n", stats.mean_ms, stats.p95_ms,
      stats.max_ms, stats.frames);
  // Where the time went (what a slow frame is made of; see Window::present_stats).
  say("UI frame parts, mean per frame: building the UI {:.1f} ms; submit to present returned {:.1f} ms "
      "(95th percentile {:.1f} ms: the device draws it and hands it to the display)\n",
      window_->build_stats().mean_ms, window_->present_stats().mean_ms, window_->present_stats().p95_ms);
  for (const auto& r : session_->snapshot())
    if (!r.error.empty()) {
      std::cerr << "trainscope: " << r.name << " stopped: " << r.error << "\n";
      if (display_.autoplay && exit_code_ == 0) exit_code_ = 1;  // an unattended lesson whose backend died
    }
  if (cfg_.validation) {
    const vk::ValidationTotals totals = vk::validation_totals();
    std::cerr << vk::describe_validation(totals);
    if (std::string error; vk::validation_failed(totals, &error)) {
      std::cerr << "trainscope: error: " << error << "\n";
      exit_code_ = 1;
    }
  }
  return interrupt_.signal() ? interrupt_.exit_code() : exit_code_;
}

}  // namespace app
