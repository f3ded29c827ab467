// `trainscope dashboard` (and `trainscope` with no arguments): the live window over both training runs; and the
// offscreen render of a finished run's dashboard for `train --screenshot`.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "app/commands.hpp"
#include "app/dashboard_host.hpp"
#include "app/dashboard_run.hpp"
#include "app/option_checks.hpp"
#include "app/print.hpp"
#include "app/window_cpu.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/measure.hpp"
#include "core/memory_budget.hpp"
#include "core/metrics.hpp"
#include "core/options.hpp"
#include "core/thread_budget.hpp"
#include "run/data.hpp"
#include "run/explain.hpp"
#include "run/interrupt.hpp"
#include "run/peaks.hpp"
#include "run/preflight.hpp"
#include "run/session.hpp"
#include "run/session_peaks.hpp"
#include "run/validate.hpp"
#include "ui/dashboard.hpp"
#include "ui/lesson_runner.hpp"
#include "ui/offscreen.hpp"
#include "ui/presenter_keys.hpp"
#include "ui/screenshot.hpp"
#include "ui/settings.hpp"
#include "ui/window.hpp"
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

// The window's keys, for --help (ui::key_help: the same list as the window's help overlay).
std::string keys_help() {
  std::string text = "\nKeys in the window (? shows them there):";
  for (const auto& line : ui::key_help()) text += fmt::format("\n  {:<24} {}", line.keys, line.does);
  return text;
}

std::string window_title(const std::vector<core::BackendRun>& runs) {
  std::string title = "trainscope";
  for (const auto& r : runs)
    if (!r.device.empty()) title += fmt::format("  |  {}: {}", ui::backend_title(r.name), r.device);
  return title;
}

}  // namespace

void parse_size(const std::string& text, int& width, int& height) {
  if (!core::parse_window_size(text, width, height))
    throw core::Error(core::ErrorKind::InvalidArgument, fmt::format("--size {}: {}", text, core::kSizeRule));
}

std::string render_dashboard_png(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs,
                                 const std::string& path, int width, int height) {
  try {
    const ui::LoadedSettings settings = ui::load_settings(ui::default_settings_path());
    ui::OffscreenOptions options;
    options.width = width;
    options.height = height;
    options.device_index = cfg.device;
    options.style = settings.settings.style();
    ui::OffscreenRenderer renderer(options);
    ui::DashboardModel model;
    model.update(runs);
    ui::DashboardView view;
    view.runs = runs;
    view.model = &model;
    view.config = cfg;
    view.peaks = run::cached_peaks(cfg.backends, cfg.device, core::default_peaks_path());
    ui::Dashboard dashboard;
    dashboard.load(settings.settings);
    const ui::Image image =
        renderer.render(ui::with_footer([&] { dashboard.draw(view, nullptr); }, ui::Dashboard::footer(view)), 3);
    return ui::write_png(image, path);
  } catch (const core::Error& e) {
    return fmt::format("the dashboard could not be rendered: {}", run::explain(e, run::Doing::Rendering));
  }
}

CLI::App* add_dashboard_command(CLI::App& parent, TrainOptions& o, DashboardOptions& d) {
  // The dashboard trains until stopped (a lesson must not end by itself); an explicit --epochs N still stops it.
  o.config.epochs = core::kUntilStopped;
  CLI::App* c = parent.add_subcommand(
      "dashboard", "Open the live window: both backends train side by side while loss curves, kernel timings and "
                   "memory bandwidth update; change batch size, learning rate, optimizer or model while it runs");
  c->footer(
      "Tabs beside the loss curves: Controls, Kernels (time per kernel), Memory (bytes by kind), Bandwidth (each\n"
      "kernel's GB/s as a share of the measured memory peak), Roofline (each kernel's GFLOP/s against its FLOP per\n"
      "byte under the devices' measured ceilings), Timeline (the last 8 steps per backend on the GPU queue, host and\n"
      "CPU threads; Export trace / Export CSV write exports/trainscope-*-trace.json and exports/trainscope-*-csv/),\n"
      "Sweep (samples/s against the batch size) and Boundary (the spiral's decision boundary).\n"
      "Peaks (GB/s, GFLOP/s): from the per-device cache of `trainscope peaks` ($XDG_CACHE_HOME/trainscope/peaks.json);\n"
      "a device missing from it, or measured on a loaded machine while this one is quiet, is measured when the window\n"
      "opens: training runs first (20 s) and between the figures, each figure measured with training paused\n"
      "(--autoplay: all at once, training paused; --frames: not measured); the Re-measure button pauses training,\n"
      "measures again and resumes." +
      keys_help());
  add_training_options(c, o);
  c->get_option("--epochs")
      ->description("Stop after N epochs, 1..10000 (without it the dashboard trains until stopped)")
      ->default_str("until stopped")
      ->check(CLI::Range(1, 10000));
  // Without --size the window opens at the size it was left at (the remembered settings).
  o.size.clear();
  c->add_option("--size", o.size, "Window size, pixels, for this run (not remembered), as given: it beats a "
                "lesson's size. Without it: a lesson's size or the remembered one (first 1600x900), either shrunk "
                "to fit the screen's work area")
      ->type_name("WxH")->default_str("the remembered size")->group("Display");
  c->add_option("--font-size", d.font_size, "Font size in pixels, 10..48 (0: the remembered setting; at a first "
                "start on a screen at most 1366 pixels wide, 24)")
      ->check(CLI::Validator(
          [](std::string& text) { return text == "0" ? "" : (core::parse_real(text, core::rules::font_size), ""); },
          ""))
      ->group("Display");
  c->add_flag("--presentation", d.presentation, "Presentation mode: large, high-contrast (for a projector)")
      ->group("Display");
  c->add_option("--max-fps", d.max_fps, "Frame-rate cap, whole frames per second 1..1000 (0: none); a software GPU "
                "shares its cores with training")
      ->check(checked(core::rules::max_fps))->group("Display");
  c->add_option("--frames", d.frames, "Render N frames, print the UI frame times, and exit (scripted screenshots)")
      ->type_name("N")->check(checked(core::rules::frames))->group("Display");
  c->add_option("--screenshot", d.screenshot, "With --frames (required): write the last frame to this PNG")
      ->check(non_empty("--screenshot", "a file name (FILE.png)"))
      ->type_name("FILE.png")->default_str("none")->group("Display");
  c->add_option("--script", d.script,
                "Give a lesson: its steps (settings, captions, speaker notes, screenshots, checks) from a JSON file, "
                "e.g. assets/lessons/batch-size.json, paced by you: Space, Right or Page Down (a presentation "
                "clicker) for the next point, Left or Page Up for the caption before (over the view it was written "
                "for). A caption may be a claim judged on steady figures measured in the lesson (the text of the "
                "outcome measured, figures filled in); a summary slide lists them (PNG and CSV). Checked before the "
                "window opens (exit 2 when malformed)")
      ->check(non_empty("--script", "a lesson file (LESSON.json)"))
      ->type_name("LESSON.json")->default_str("none")->group("Lesson");
  c->add_flag("--autoplay", d.autoplay,
              "With --script: play the lesson unattended, start to end (CI, the README's pictures); its conditions "
              "time out (exit 1) and its quit step closes the window (without one: after its last step, with a "
              "warning); a backend that stopped with an error makes the exit code 1")
      ->group("Lesson");
  c->add_option("--output", d.output,
                "With --script: the folder of the lesson's screenshots (made if missing); default: your pictures "
                "folder/trainscope/LESSON (XDG_PICTURES_DIR, else ~/Pictures), never the current folder")
      ->check(non_empty("--output", "a folder for the lesson's screenshots"))
      ->type_name("DIR")->default_str("pictures folder")->group("Lesson");
  c->add_option("--steady", d.steady,
                "With --script: every \"steady\" condition of the lesson needs N steps since the change and S seconds "
                "of stable figures instead of its own (default 20 steps, 3 s); e.g. 2,0 (2 steps, no settling) plays "
                "a lesson's flow quickly (the tests do), with pictures of figures that have not settled")
      ->type_name("N,S")->default_str("the lesson's")->group("Lesson");
  return c;
}

int run_dashboard(TrainOptions& o, DashboardOptions& d) {
  core::TrainConfig& cfg = o.config;
  // Ctrl-C / SIGTERM close the window as its close button does (training stopped, settings saved); a second signal
  // exits at once. Before any thread exists (see InterruptWatch).
  run::InterruptWatch interrupt([](int signal) {
    std::cerr << fmt::format("trainscope: {}: closing the dashboard (again to quit at once)\n",
                             run::InterruptWatch::name(signal));
  });
  finish_config(o);
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
  const std::optional<ui::LessonSteady> steady = parse_steady(d.steady);
  // A lesson is read and checked whole before anything else: a malformed one is refused before the window opens.
  std::optional<ui::LessonRunner> lesson;
  const bool size_given = !o.size.empty();  // --size: as given, beating a lesson's size, never shrunk to the screen
  if (!d.script.empty()) {
    ui::Lesson l = ui::load_lesson(d.script);
    cfg = l.apply(cfg);
    core::validate(cfg);
    if (l.size && !size_given) o.size = *l.size;
    const std::filesystem::path output =
        d.output.empty() ? ui::default_lesson_output(d.script) : std::filesystem::path(d.output);
    ui::check_lesson_output(l, output);
    lesson.emplace(std::move(l), ui::LessonOptions{d.autoplay, output, steady});
  }
  int width = 0, height = 0;
  if (!o.size.empty()) parse_size(o.size, width, height);

  const std::filesystem::path settings_path = ui::default_settings_path();
  // A first start: no remembered settings yet (then a small screen gets large type, ui::WindowOptions).
  std::error_code no_file;
  const bool first_start = settings_path.empty() || !std::filesystem::exists(settings_path, no_file);
  ui::LoadedSettings loaded = ui::load_settings(settings_path);
  if (!loaded.warning.empty()) std::cerr << "trainscope: warning: " << loaded.warning << "\n";
  if (o.size.empty()) width = loaded.settings.window_width, height = loaded.settings.window_height;
  ui::Settings settings = loaded.settings;
  if (d.font_size > 0) settings.font_size = d.font_size;
  if (d.presentation) settings.presentation = true;
  if (lesson) {
    const ui::Lesson& l = lesson->lesson();
    if (l.presentation) settings.presentation = *l.presentation;
    if (l.font_size) settings.font_size = *l.font_size;
    if (l.tab) settings.tab = *l.tab;
  }

  // With a lesson the data comes first (its batch sizes are checked against it before the window opens); without
  // one the window does, so that a missing display is said at once.
  std::shared_ptr<const core::DataSplit> data;
  auto load = [&] {
    data = std::make_shared<const core::DataSplit>(run::load_data(cfg));
    // With the window and a screenshot of it (F12 at any time), in the one budget: issue 34's 16384x16384.
    run::PreflightOptions check;
    check.extra = core::picture_memory_need(width, height, "the window and a screenshot of it,");
    run::preflight(cfg, *data, run::new_trainers(run::backends_from_config(cfg)), check);
    if (lesson) ui::check_lesson_settings(lesson->lesson(), cfg, *data);
  };
  if (lesson) load();

  ui::WindowOptions wo;
  wo.title = "trainscope";
  wo.width = width;
  wo.height = height;
  wo.device_index = cfg.device;
  wo.max_fps = d.max_fps;
  wo.fit_work_area = !size_given;  // a remembered or a lesson's size never opens beyond the screen
  wo.large_type_on_small_screens = first_start && d.font_size == 0 && !d.presentation &&
                                   !(lesson && (lesson->lesson().font_size || lesson->lesson().presentation));
  wo.style = settings.style();
  std::unique_ptr<ui::Window> window;
  try {
    window = std::make_unique<ui::Window>(wo);
  } catch (const core::Error& e) {
    throw core::Error(e.kind(),
                      fmt::format("{}. {}", run::explain(e, run::Doing::Rendering), window_advice(e.what())));
  }
  if (!data) load();

  run::Observer observer;  // the window reads snapshots; nothing to print
  run::SessionOptions session_options;
  session_options.keep_alive = true;
  session_options.lower_priority = true;  // the window first (and app::WindowCpu tells its threads by their nice 0)
  session_options.fair = fair_by_default(cfg);
  // --frames measures the window's frames: no background compile beside them.
  const std::vector<core::Precision> ahead =
      d.frames > 0 ? std::vector<core::Precision>{} : compile_ahead(cfg, lesson && d.autoplay ? &lesson->lesson() : nullptr);
  run::Session session(cfg, data, run::backends_from_config(cfg, ahead), observer, session_options);
  const double load_before = core::load_average();  // the machine's, before this session trains
  session.start();
  // The devices' peaks from the cache. A device missing from it (or measured under load, while the machine is quiet
  // now) is measured between turns: training starts at once and runs between the figures, each figure measured with
  // training paused (never under load), so that the first minute shows training, not a pause. A lesson played
  // unattended measures all at once first, so that no picture says "no peak"; --frames (a frame-time measurement)
  // does not measure and says "not measured" instead.
  auto peaks = std::make_unique<run::SessionPeaks>(session, cfg.backends, cfg.device, core::default_peaks_path(),
                                                   run::SessionPeaks::Measure{}, load_before);
  if (peaks->missing() && d.frames == 0)
    peaks->measure(true, lesson && d.autoplay ? std::nullopt : std::optional<run::BetweenTurns>(run::BetweenTurns{}));
  ui::DashboardModel model;
  ui::Dashboard dashboard;
  dashboard.load(settings);
  DashboardSweep sweep([&session](const run::Command& c) { session.post(c); });
  SessionController controller(session, *peaks, *window, dashboard, sweep);
  std::string toast, title;
  const bool final_shot = d.frames > 0 && !d.screenshot.empty();
  bool final_requested = false, final_done = false;
  int exit_code = 0;
  // What the window starts with: only what the user changes in the window is remembered, not a --size,
  // --font-size or --presentation given for this run.
  const ui::StyleOptions start_style = window->style();
  const int start_width = window->width(), start_height = window->height();
  ui::PresenterKeys keys(lesson.has_value());  // the teacher's keys: Space, B, P, F11, ?, Esc...
  std::string longest_caption;  // the caption band is as tall as the lesson's longest caption needs, all along
  if (lesson) {
    const ui::Lesson& l = lesson->lesson();
    say("lesson: {} ({} steps, {} points{})\n", l.title, l.steps.size(), l.points(),
        d.autoplay ? ", autoplay"
                   : "; Space, Right or Page Down: next; Left or Page Up: the caption before; ?: all keys");
    for (const auto& step : l.steps) {
      if (step.caption && step.caption->size() > longest_caption.size()) longest_caption = *step.caption;
      if (step.caption_claim)  // a claim's texts, with room for the figures filled in
        for (const std::string* t : {&step.caption_claim->yes, &step.caption_claim->no, &step.caption_claim->even})
          if (t->size() + 16 > longest_caption.size()) longest_caption = *t + std::string(16, 'x');
    }
  }
  // Rendering on demand: a frame when the user does something (then at up to --max-fps for a moment, so that ImGui
  // settles), when the figures change (at most kDataFps times a second: the trainers read back 4 times a second),
  // and once a second otherwise (ages, timers). --frames draws every frame, as a frame-time measurement.
  app::WindowCpu window_cpu;
  double last_draw_s = -1, settle_until_s = 0, window_cores = -1;
  std::string drawn_signature, view_peaks_said;
  int frame = 0;
  while (!window->should_close() && !interrupt.signal()) {
    const bool continuous = d.frames > 0;
    const bool input = window->wait_for_input(continuous ? 0.0 : kPollSeconds);
    ui::DashboardView view;
    view.runs = session.snapshot();
    model.update(view.runs);
    view.model = &model;
    view.config = session.settings();  // what the controls show: what a Reset restarts with
    view.pause_requested = session.pause_requested();
    view.session_status = session.status();
    view.live = true;
    view.now_s = core::monotonic_seconds();
    view.fair = session.fair();
    if (const double cores = window_cpu.sample(view.now_s); cores >= 0) window_cores = cores;
    view.window_cores = window_cores;
    const ui::FrameStats stats = window->frame_stats();
    view.ui_frame_ms = stats.last_ms;
    view.ui_frame_p95_ms = stats.p95_ms;
    sweep.update(view);  // a requested sweep starts; an ended one resumes training
    view.sweep = sweep.state();
    view.sweep_busy = sweep.busy();
    view.sweep_status = view.sweep.status;
    view.sweep_saved = sweep.saved();
    run::SessionPeaks::State peaks_state = peaks->state();
    view.peaks = std::move(peaks_state.backends);
    view.peaks_measuring = peaks_state.measuring;
    view.peaks_training_between = peaks_state.training_between;
    view.peaks_stage = std::move(peaks_state.stage);
    if (peaks_state.message != view_peaks_said && !peaks_state.message.empty())  // once, in the terminal too
      say("peaks: {}\n", view_peaks_said = peaks_state.message);
    view.peaks_message = std::move(peaks_state.message);
    apply_keys(window->take_keys(), keys, lesson ? &*lesson : nullptr, view, controller, session, *window);
    if (lesson) {
      lesson->update(view.now_s, view, controller);
      for (const auto& line : lesson->take_log()) say("lesson: {}\n", line);
      flush(stdout);
      view.caption = lesson->caption();
      view.caption_hint = lesson->hint();
      view.caption_reserve = longest_caption;
      view.summary_shown = lesson->summary_shown();
      if (view.summary_shown) view.summary = lesson->summary(), view.summary_title = lesson->lesson().title;
      if (lesson->exit_code()) {
        exit_code = *lesson->exit_code();
        break;
      }
      if (d.autoplay && lesson->finished()) {  // no "quit" step: an unattended run must end all the same
        std::cerr << "trainscope: warning: " << d.script
                  << ": the lesson has no \"quit\" step; --autoplay closes the window after its last step\n";
        break;
      }
    }
    if (input) settle_until_s = view.now_s + kSettleSeconds;
    const std::string signature = view_signature(view, toast);
    const bool shot_wanted = controller.pending_screenshot() || final_requested;
    const bool draw = continuous || input || view.now_s < settle_until_s || shot_wanted || last_draw_s < 0 ||
                      (signature != drawn_signature && view.now_s - last_draw_s >= 1.0 / kDataFps) ||
                      view.now_s - last_draw_s >= 1.0;
    if (!draw) continue;
    last_draw_s = view.now_s;
    drawn_signature = signature;
    if (const std::string t = window_title(view.runs); t != title) window->set_title(title = t);
    window->set_footer(ui::Dashboard::footer(view));
    window->frame([&] {
      dashboard.draw(view, &controller, toast);
      if (keys.draw() == ui::KeyAction::Quit) window->request_close();  // blank screen, help, "quit the lesson?"
    });

    if (controller.take_request() && !window->request_screenshot()) {
      toast = "screenshot: not possible now (one is still being saved, or this window cannot be read back)";
      controller.saved(toast);
    }
    if (auto shot = window->take_screenshot_result()) {
      const bool is_final = final_requested && !final_done;
      const std::string path = is_final ? d.screenshot : controller.pending_path().value_or("");
      // A lesson's picture replaces only a PNG (checked again now: the folder may have changed since the start).
      const std::string refused = controller.pending_is_lesson() ? ui::lesson_screenshot_target_problem(path) : "";
      const ui::SavedScreenshot saved =
          refused.empty() ? ui::save_screenshot(*shot, path) : ui::SavedScreenshot{path, refused};
      toast = saved.error.empty() ? "screenshot saved: " + saved.path : "screenshot failed: " + saved.error;
      std::cerr << "trainscope: " << toast << "\n";
      if (is_final) {
        final_done = true;
        if (!saved.error.empty()) exit_code = 1;
      } else {
        controller.saved(saved.error);
      }
    }
    ++frame;
    // --frames N: stop after N frames; with --screenshot, once that frame has been read back and saved.
    if (d.frames > 0 && frame >= d.frames) {
      if (!final_shot || final_done) break;
      if (!final_requested) {
        final_requested = window->request_screenshot();
        if (!final_requested) {
          std::cerr << "trainscope: error: --screenshot: this window's images cannot be read back\n";
          exit_code = 1;
          break;
        }
      }
      if (frame >= d.frames + 30) {  // a read-back that never completes must not hang a script
        std::cerr << "trainscope: error: --screenshot: the frame was not read back\n";
        exit_code = 1;
        break;
      }
    }
  }
  peaks.reset();  // abandons a measurement at its next figure
  session.request_stop();
  session.wait();

  // A lesson's window settings (presentation mode, a tab) are its own: the teacher's remembered ones stay. Otherwise
  // what the user changed in the window is remembered; what the command line gave for this run is not.
  if (!lesson) {
    ui::Settings remembered = loaded.settings;
    dashboard.save(remembered);
    if (window->style().font_size != start_style.font_size) remembered.font_size = window->style().font_size;
    if (window->style().presentation != start_style.presentation)
      remembered.presentation = window->style().presentation;
    if (!window->full_screen() && (window->width() != start_width || window->height() != start_height))
      remembered.window_width = window->width(), remembered.window_height = window->height();
    if (const std::string error = ui::save_settings(remembered, settings_path); !error.empty())
      std::cerr << "trainscope: warning: settings not saved: " << error << "\n";
  }
  if (lesson && lesson->failed() && exit_code == 0) exit_code = 1;  // a teacher's lesson that went on past a failure

  const ui::FrameStats stats = window->frame_stats();
  say("UI frame time: mean {:.1f} ms, p95 {:.1f} ms, max {:.1f} ms over {} frames\n", stats.mean_ms, stats.p95_ms,
      stats.max_ms, stats.frames);
  // Where the time went (what a slow frame is made of; see Window::present_stats).
  say("UI frame parts, mean per frame: building the UI {:.1f} ms; submit to present returned {:.1f} ms "
      "(95th percentile {:.1f} ms: the device draws it and hands it to the display)\n",
      window->build_stats().mean_ms, window->present_stats().mean_ms, window->present_stats().p95_ms);
  for (const auto& r : session.snapshot())
    if (!r.error.empty()) {
      std::cerr << "trainscope: " << r.name << " stopped: " << r.error << "\n";
      if (d.autoplay && exit_code == 0) exit_code = 1;  // an unattended lesson whose backend died did not play whole
    }
  if (cfg.validation) {
    const vk::ValidationTotals totals = vk::validation_totals();
    std::cerr << vk::describe_validation(totals);
    if (std::string error; vk::validation_failed(totals, &error)) {
      std::cerr << "trainscope: error: " << error << "\n";
      exit_code = 1;
    }
  }
  return interrupt.signal() ? interrupt.exit_code() : exit_code;
}

}  // namespace app
