// `trainscope dashboard` (and `trainscope` with no arguments): the live window over both training runs; and the
// offscreen render of a finished run's dashboard for `train --screenshot`.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "core/error.hpp"
#include "run/explain.hpp"
#include "core/files.hpp"
#include "core/options.hpp"
#include "core/csv_export.hpp"
#include "core/report.hpp"
#include "core/trace.hpp"
#include "run/data.hpp"
#include "run/interrupt.hpp"
#include "run/peaks.hpp"
#include "run/session.hpp"
#include "run/session_peaks.hpp"
#include "core/metrics.hpp"
#include "ui/dashboard.hpp"
#include "ui/lesson_runner.hpp"
#include "ui/offscreen.hpp"
#include "ui/screenshot.hpp"
#include "ui/settings.hpp"
#include "ui/window.hpp"
#include "vk/device.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

// The dashboard's controls and a lesson's steps, applied to the session (commands, resets), the window (style,
// screenshots) and the dashboard (views).
class SessionController final : public ui::Controller, public ui::LessonHost {
 public:
  SessionController(run::Session& session, run::SessionPeaks& peaks, ui::Window& window, ui::Dashboard& dashboard)
      : session_(session), peaks_(peaks), window_(window), dashboard_(dashboard) {}
  void post(const run::Command& command) override { session_.post(command); }
  void reset(const core::TrainConfig& config) override { session_.request_reset(config); }
  void request_screenshot() override { shot_ = Shot{}; }
  void set_style(const ui::StyleOptions& style) override { window_.set_style(style); }
  ui::StyleOptions style() const override { return window_.style(); }
  void remeasure_peaks() override { peaks_.measure(false); }

  std::string export_trace() override {
    std::vector<core::BackendTimeline> timelines;
    for (const auto& r : session_.snapshot())
      if (r.timeline) timelines.push_back(*r.timeline);
    if (timelines.empty()) return "trace not saved: no step has been timed yet";
    return write_export("trace", ui::timestamped_path(kExportFolder, "-trace.json"), [&](const std::string& path) {
      core::write_trace(path, timelines, {{"producer", "trainscope dashboard"},
                                          {"config", core::config_json(session_.settings())}});
      return "trace saved: " + path + " (open it in Perfetto)";
    });
  }

  std::string export_csv() override {
    std::vector<core::DevicePeaks> peaks;
    for (auto& b : peaks_.state().backends)
      if (b.peaks) peaks.push_back(std::move(*b.peaks));
    return write_export("CSV", ui::timestamped_path(kExportFolder, "-csv"), [&](const std::string& dir) {
      core::write_csv_dir(dir, session_.snapshot(true), peaks);
      return "CSV saved: " + dir + "/{steps,kernels,peaks}.csv";
    });
  }

  void show(const ui::LessonView& v) override {
    if (v.tab)
      if (auto tab = ui::parse_tab(*v.tab)) dashboard_.show(*tab);
    if (v.x_seconds) dashboard_.loss.x_axis = *v.x_seconds ? ui::LossCurves::XAxis::Seconds : ui::LossCurves::XAxis::Step;
    if (v.accuracy) dashboard_.loss.show_accuracy = *v.accuracy;
    if (v.kernels)
      dashboard_.kernels.part = *v.kernels == "tables"       ? ui::KernelTimings::Part::Tables
                                : *v.kernels == "precisions" ? ui::KernelTimings::Part::Precisions
                                                             : ui::KernelTimings::Part::Bars;
    if (v.presentation || v.font_size) {
      ui::StyleOptions style = window_.style();
      if (v.presentation) style.presentation = *v.presentation;
      if (v.font_size) style.font_size = *v.font_size;
      window_.set_style(style);
    }
  }
  void screenshot(const std::string& path) override { shot_ = Shot{path, true, std::nullopt}; }
  void start_sweep() override { dashboard_.sweep.request_start(); }
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

 private:
  static constexpr const char* kExportFolder = "exports";

  // Makes the exports folder and runs `write`; its message, or what failed and what to do.
  template <typename Write>
  static std::string write_export(const char* what, const std::string& path, Write write) {
    std::error_code ec;
    std::filesystem::create_directories(kExportFolder, ec);
    if (ec)
      return fmt::format("{} not saved: cannot create the folder {}/ ({}); start trainscope in a folder you can write",
                         what, kExportFolder, ec.message());
    try {
      return write(path);
    } catch (const std::exception& e) {
      return fmt::format("{} not saved: {}", what, e.what());
    }
  }

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
  std::optional<Shot> shot_;
};

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

std::string window_title(const std::vector<core::BackendRun>& runs) {
  std::string title = "trainscope";
  for (const auto& r : runs)
    if (!r.device.empty()) title += fmt::format("  |  {}: {}", ui::backend_title(r.name), r.device);
  return title;
}

}  // namespace

void parse_size(const std::string& text, int& width, int& height) {
  const size_t x = text.find('x');
  auto number = [](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (x == std::string::npos || !number(std::string_view(text).substr(0, x), width) ||
      !number(std::string_view(text).substr(x + 1), height) || width < 64 || height < 64 || width > 16384 ||
      height > 16384)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--size {}: give WIDTHxHEIGHT in pixels, each 64..16384, e.g. 1600x900", text));
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
      "a device missing from it is measured once when the window opens, with training paused (not with --script or\n"
      "--frames: those say \"not measured\"); the Re-measure button pauses training, measures again and resumes.");
  add_training_options(c, o);
  c->get_option("--epochs")
      ->description("Stop after N epochs, 1..10000 (without it the dashboard trains until stopped)")
      ->default_str("until stopped")
      ->check(CLI::Range(1, 10000));
  c->add_option("--size", o.size, "Window size, pixels")->type_name("WxH")->group("Display");
  c->add_option("--font-size", d.font_size, "Font size in pixels, 10..48 (0: the remembered setting)")
      ->check(CLI::Validator(
          [](std::string& text) { return text == "0" ? "" : (core::parse_real(text, core::rules::font_size), ""); },
          ""))
      ->group("Display");
  c->add_flag("--presentation", d.presentation, "Presentation mode: large, high-contrast (for a projector)")
      ->group("Display");
  c->add_option("--max-fps", d.max_fps, "Frame-rate cap, 0..1000 (0: none); a software GPU shares its cores with "
                "training")
      ->check(checked(core::rules::max_fps))->group("Display");
  c->add_option("--frames", d.frames, "Render N frames, print the UI frame times, and exit (scripted screenshots)")
      ->type_name("N")->check(checked(core::rules::frames))->group("Display");
  c->add_option("--screenshot", d.screenshot, "With --frames: write the last frame to this PNG")
      ->type_name("FILE.png")->default_str("none")->group("Display");
  c->add_option("--script", d.script,
                "Run a lesson: timed steps (settings, captions, screenshots, checks) from a JSON file, e.g. "
                "assets/lessons/batch-size.json; it is checked before the window opens (exit 2 when malformed)")
      ->type_name("LESSON.json")->default_str("none")->group("Display");
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
  if (!d.screenshot.empty()) core::check_output_path(d.screenshot, "--screenshot");
  // A lesson is read and checked whole before anything else: a malformed one is refused before the window opens.
  std::optional<ui::LessonRunner> lesson;
  if (!d.script.empty()) {
    ui::Lesson l = ui::load_lesson(d.script);
    cfg = l.apply(cfg);
    core::validate(cfg);
    if (l.size) o.size = *l.size;
    lesson.emplace(std::move(l));
  }
  int width = 0, height = 0;
  parse_size(o.size, width, height);

  const std::filesystem::path settings_path = ui::default_settings_path();
  ui::LoadedSettings loaded = ui::load_settings(settings_path);
  if (!loaded.warning.empty()) std::cerr << "trainscope: warning: " << loaded.warning << "\n";
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
    core::validate_against_data(cfg, *data);
    if (lesson) ui::check_lesson_against_data(lesson->lesson(), data->train.count);
  };
  if (lesson) load();

  ui::WindowOptions wo;
  wo.title = "trainscope";
  wo.width = width;
  wo.height = height;
  wo.device_index = cfg.device;
  wo.max_fps = d.max_fps;
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
  run::Session session(cfg, data, run::backends_from_config(cfg), observer, run::SessionOptions{true, true});
  session.start();
  // The devices' peaks from the cache. A device missing from it is measured once, now, with training paused (never
  // under load); scripted runs (a lesson, --frames) never pause for it: they show "not measured" instead.
  auto peaks = std::make_unique<run::SessionPeaks>(session, cfg.backends, cfg.device, core::default_peaks_path());
  if (peaks->missing() && !lesson && d.frames == 0) peaks->measure(true);
  ui::DashboardModel model;
  ui::Dashboard dashboard;
  dashboard.load(settings);
  SessionController controller(session, *peaks, *window, dashboard);
  std::string toast, title;
  const bool final_shot = d.frames > 0 && !d.screenshot.empty();
  bool final_requested = false, final_done = false;
  int exit_code = 0;
  if (lesson) fmt::print("lesson: {} ({} steps)\n", lesson->lesson().title, lesson->lesson().steps.size());
  for (int frame = 0; !window->should_close() && !interrupt.signal(); ++frame) {
    ui::DashboardView view;
    view.runs = session.snapshot();
    model.update(view.runs);
    view.model = &model;
    view.config = session.settings();  // what the controls show: what a Reset restarts with
    view.pause_requested = session.pause_requested();
    view.session_status = session.status();
    view.live = true;
    view.now_s = core::monotonic_seconds();
    const ui::FrameStats stats = window->frame_stats();
    view.ui_frame_ms = stats.last_ms;
    view.ui_frame_p95_ms = stats.p95_ms;
    view.sweep_busy = dashboard.sweep.busy();
    view.sweep_status = dashboard.sweep.state().status;
    run::SessionPeaks::State peaks_state = peaks->state();
    view.peaks = std::move(peaks_state.backends);
    view.peaks_measuring = peaks_state.measuring;
    view.peaks_stage = std::move(peaks_state.stage);
    view.peaks_message = std::move(peaks_state.message);
    if (lesson) {
      lesson->update(view.now_s, view, controller);
      for (const auto& line : lesson->take_log()) fmt::print("lesson: {}\n", line);
      std::fflush(stdout);
      view.caption = lesson->caption();
      if (lesson->exit_code()) {
        exit_code = *lesson->exit_code();
        break;
      }
    }
    if (const std::string t = window_title(view.runs); t != title) window->set_title(title = t);
    window->set_footer(ui::Dashboard::footer(view));
    window->frame([&] { dashboard.draw(view, &controller, toast); });

    if (controller.take_request() && !window->request_screenshot()) {
      toast = "screenshot: not possible now (one is still being saved, or this window cannot be read back)";
      controller.saved(toast);
    }
    if (auto shot = window->take_screenshot_result()) {
      const bool is_final = final_requested && !final_done;
      const std::string path = is_final ? d.screenshot : controller.pending_path().value_or("");
      const ui::SavedScreenshot saved = ui::save_screenshot(*shot, path);
      toast = saved.error.empty() ? "screenshot saved: " + saved.path : "screenshot failed: " + saved.error;
      std::cerr << "trainscope: " << toast << "\n";
      if (is_final) {
        final_done = true;
        if (!saved.error.empty()) exit_code = 1;
      } else {
        controller.saved(saved.error);
      }
    }
    // --frames N: stop after N frames; with --screenshot, once that frame has been read back and saved.
    if (d.frames > 0 && frame + 1 >= d.frames) {
      if (!final_shot || final_done) break;
      if (!final_requested) {
        final_requested = window->request_screenshot();
        if (!final_requested) {
          std::cerr << "trainscope: error: --screenshot: this window's images cannot be read back\n";
          exit_code = 1;
          break;
        }
      }
      if (frame + 1 >= d.frames + 30) {  // a read-back that never completes must not hang a script
        std::cerr << "trainscope: error: --screenshot: the frame was not read back\n";
        exit_code = 1;
        break;
      }
    }
  }
  peaks.reset();  // abandons a measurement at its next figure
  session.request_stop();
  session.wait();

  // A lesson's window settings (presentation mode, a tab) are its own: the teacher's remembered ones stay.
  if (!lesson) {
    dashboard.save(settings);
    settings.font_size = window->style().font_size;
    settings.presentation = window->style().presentation;
    settings.window_width = window->width();
    settings.window_height = window->height();
    if (const std::string error = ui::save_settings(settings, settings_path); !error.empty())
      std::cerr << "trainscope: warning: settings not saved: " << error << "\n";
  }

  const ui::FrameStats stats = window->frame_stats();
  fmt::print("UI frame time: mean {:.1f} ms, p95 {:.1f} ms, max {:.1f} ms over {} frames\n", stats.mean_ms,
             stats.p95_ms, stats.max_ms, stats.frames);
  // Where the time went (what a slow frame is made of; see Window::present_stats).
  fmt::print("UI frame parts, mean per frame: building the UI {:.1f} ms; submit to present returned {:.1f} ms "
             "(95th percentile {:.1f} ms: the device draws it and hands it to the display)\n",
             window->build_stats().mean_ms, window->present_stats().mean_ms, window->present_stats().p95_ms);
  for (const auto& r : session.snapshot())
    if (!r.error.empty()) std::cerr << "trainscope: " << r.name << " stopped: " << r.error << "\n";
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
