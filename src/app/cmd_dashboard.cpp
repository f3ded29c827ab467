// `trainscope dashboard` (and `trainscope` with no arguments): its options and --help, and its run (the live window
// over both training runs: app::DashboardApp); and the offscreen render of a finished run's dashboard for
// `train --screenshot`.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/dashboard_app.hpp"
#include "app/option_checks.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "core/peaks.hpp"
#include "run/explain.hpp"
#include "run/peaks.hpp"
#include "ui/dashboard.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/offscreen.hpp"
#include "ui/presenter_keys.hpp"
#include "ui/screenshot.hpp"
#include "ui/settings.hpp"

namespace app {
namespace {

// The window's keys, for --help (ui::key_help: the same list as the window's help overlay).
std::string keys_help() {
  std::string text = "\nKeys in the window (? shows them there):";
  for (const auto& line : ui::key_help()) text += fmt::format("\n  {:<24} {}", line.keys, line.does);
  return text;
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
  DashboardApp app(o, d);  // the pre-flight: bad options or a malformed lesson are refused before the window opens
  return app.run();
}

}  // namespace app
