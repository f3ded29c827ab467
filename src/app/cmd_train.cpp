// `trainscope train`: the options, the checks of the command line, loading the data, and one training session
// with a progress display, the per-kernel tables and the GPU/CPU speedup at the end.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/print.hpp"
#include "app/progress.hpp"
#include "app/summary.hpp"
#include "core/batches.hpp"
#include "core/csv_export.hpp"
#include "core/dataset.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/memory_budget.hpp"
#include "core/report.hpp"
#include "core/run_plan.hpp"
#include "core/step_plan.hpp"
#include "core/thread_budget.hpp"
#include "core/timeline.hpp"
#include "core/trace.hpp"
#include "platform/system.hpp"
#include "run/data.hpp"
#include "run/interrupt.hpp"
#include "run/peaks.hpp"
#include "run/preflight.hpp"
#include "run/session.hpp"
#include "run/validate.hpp"
#include "vk/device.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

[[noreturn]] void bad_input(const std::string& message) {
  throw core::Error(core::ErrorKind::InvalidArgument, message);
}

void print_header(const core::TrainConfig& cfg, const core::DataSplit& data) {
  const core::RunPlan run = core::run_plan(cfg, data);
  const core::ModelShape& shape = run.shape;
  const core::StepPlan& plan = run.plan;
  const int steps = core::steps_per_epoch(data.train.count, cfg.batch);
  if (data.train.tokens())
    say("data:  {}, {} training / {} test sequences of {} tokens, a vocabulary of {}; the loss counts {} positions "
        "of each\n",
        data.train.name, data.train.count, data.test.count, data.train.features, data.train.classes,
        data.train.counted);
  else
    say("data:  {}, {} training / {} test samples, {} features, {} classes\n", data.train.name, data.train.count,
        data.test.count, data.train.features, data.train.classes);
  say("model: {}{} ({} parameters), {}, {} lr {:g} weight decay {:g}{}\n",
      shape.is_transformer() ? "" : shape.is_cnn() ? "CNN " : "MLP ", shape.describe(), shape.real_param_count,
      core::to_string(cfg.activation), core::to_string(cfg.optimizer), cfg.lr, cfg.effective_weight_decay(),
      cfg.optimizer == core::Optimizer::SGD ? fmt::format(" momentum {:g}", cfg.momentum) : "");
  say("step:  batch {}, {} steps per epoch, {} epoch{}; one step = {}FLOP, {}B of compulsory memory traffic\n",
      cfg.batch, steps, cfg.epochs, cfg.epochs == 1 ? "" : "s", with_si_prefix(plan.total_flops()),
      with_si_prefix(plan.total_bytes()));
  if (cfg.precision != core::Precision::FP32)
    say("precision: {} storage of weights, activations and gradients; fp32 accumulation, master weights and "
        "optimizer state{}\n",
        core::to_string(cfg.precision),
        plan.loss_scaling() ? fmt::format("; dynamic loss scaling from {:g}", cfg.loss_scale_init) : "");
  if (cfg.execution.any())
    say("teaching toggles: {} ({} kernels per step)\n", core::to_string(cfg.execution), plan.entries.size());
  if (const core::AttentionTraffic t = core::attention_traffic(plan); t.naive > 0)
    say("attention: {}B of compulsory memory traffic per step fused, {}B naive (the scores written and read "
        "back); this run: {}\n",
        with_si_prefix(t.fused), with_si_prefix(t.naive), cfg.execution.naive_attention ? "naive" : "fused");
  if (cfg.input.host())
    say("input: {}; {}B uploaded per step\n", core::to_string(cfg.input),
        with_si_prefix(double(core::batch_upload_bytes(cfg.batch, plan.shape.inputs(), cfg.precision))));
  std::string backends;
  for (const auto& b : cfg.backends) backends += (backends.empty() ? "" : ", ") + b;
  say("run:   {}{}\n\n", backends,
      cfg.backends.size() < 2 ? ""
      : cfg.sequential        ? " one after the other"
                              : " side by side (both at once)");
  flush(stdout);
}

// The median wall-clock time of a training step per backend (the first step of the run left out: warm-up).
void print_step_times(const std::vector<core::BackendRun>& runs) {
  std::string line;
  for (const auto& r : runs) {  // (wall-clock times: also on a device without timestamps)
    std::vector<double> ms;
    for (size_t i = 1; i < r.step_seconds.size(); ++i)
      ms.push_back(1e3 * (r.step_seconds[i] - r.step_seconds[i - 1]));
    if (ms.empty()) continue;
    std::sort(ms.begin(), ms.end());
    line += fmt::format("{}{} {:.2f} ms", line.empty() ? "" : ", ", r.name, ms[ms.size() / 2]);
    line += fmt::format(" (median of {} steps)", ms.size());
  }
  if (!line.empty()) say("step time: {}\n", line);
  // The devices' busy share: kernel time (GPU: its timestamps; CPU: the clock) over wall time from step end to step
  // end, the batch's upload (--input host) not counted as busy.
  std::string busy;
  for (const auto& r : runs) {
    if (r.kernels.untimed_steps() > 0)  // no kernel times (a device without timestamps): no busy share either
      busy += fmt::format("{}{} unavailable (no timestamps)", busy.empty() ? "" : ", ", r.name);
    else if (r.wall_s > 0)
      busy += fmt::format("{}{} {:.0f}%", busy.empty() ? "" : ", ", r.name, 100 * r.busy_share());
  }
  if (!busy.empty()) say("busy (kernels' share of the wall time): {}\n", busy);
}

constexpr core::IntRule kTraceSteps{"--trace-steps", "the number of steps in the trace", 1, 10000};

// --trace and --csv at the end of a run: the trace of each backend's last steps, the CSV tables with the cached peaks
// of the devices (never measured here: `trainscope peaks` does that). Returns 0, or 1 after printing what failed.
int write_exports(const TrainOptions& o, const std::vector<core::BackendRun>& runs) {
  int code = 0;
  if (!o.trace.empty()) {
    std::vector<core::BackendTimeline> timelines;
    for (const auto& r : runs)
      if (r.timeline) timelines.push_back(*r.timeline);
    const nlohmann::json about = {{"producer", "trainscope train"},
                                  {"config", core::config_json(o.config)},
                                  {"trace_steps", o.trace_steps}};
    try {
      core::write_trace(o.trace, timelines, about);
      say("trace: {} (the last {} steps of each backend; open it in Perfetto or chrome://tracing)\n", o.trace,
          o.trace_steps);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      code = 1;
    }
  }
  if (!o.csv.empty()) {
    std::vector<std::string> names;
    for (const auto& r : runs) names.push_back(r.name);
    std::vector<core::DevicePeaks> peaks;
    for (auto& b : run::cached_peaks(names, o.config.device, core::default_peaks_path()))
      if (b.peaks) peaks.push_back(std::move(*b.peaks));
    try {
      core::write_csv_dir(o.csv, runs, peaks);
      say("csv: {}/{{steps,kernels,peaks}}.csv{}\n", o.csv,
          peaks.size() < runs.size() ? " (peaks.csv: only devices in the peaks cache; trainscope peaks measures "
                                       "the others)"
                                     : "");
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      code = 1;
    }
  }
  return code;
}

// While alive, what is printed to standard output goes to standard error (the real stdout is kept aside).
class StdoutToStderr {
 public:
  StdoutToStderr() {
    flush(stdout);
    redirect_.emplace();
  }
  ~StdoutToStderr() {
    flush(stdout);
    redirect_.reset();
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  std::optional<platform::StdoutToStderr> redirect_;
};

// Output paths that cannot be written are refused before training, not after it; --size is read into width, height.
void check_outputs(const TrainOptions& o, int& width, int& height) {
  if (!o.report.empty()) core::check_output_path(o.report, "--report");
  core::check(kTraceSteps, o.trace_steps);
  if (!o.trace.empty()) core::check_output_path(o.trace, "--trace");
  if (!o.csv.empty()) core::check_csv_dir(o.csv, "--csv");
  parse_size(o.size, width, height);  // even without --screenshot: a bad value is said, not ignored
  if (!o.screenshot.empty()) core::check_output_path(o.screenshot, "--screenshot");
  // Two outputs naming one file would leave only the last one written.
  std::vector<core::NamedOutput> outputs{{"--report", o.report}, {"--trace", o.trace}, {"--screenshot", o.screenshot}};
  for (auto& csv : core::csv_dir_outputs(o.csv, "--csv")) outputs.push_back(std::move(csv));
  core::check_distinct_outputs(outputs);
}

// The devices' peaks for the report's roofline: from the cache, or measured now (not after an interrupt: that run
// must end at once; a signal during the measurement stops it). Says what was measured or is missing.
std::vector<core::BackendPeaks> report_peaks(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs,
                                             bool training_interrupted, const run::InterruptWatch& interrupt) {
  std::optional<std::vector<core::BackendPeaks>> peaks;
  std::vector<std::string> names;
  for (const auto& r : runs) names.push_back(r.name);
  if (training_interrupted) {
    peaks = run::cached_peaks(names, cfg.device, core::default_peaks_path());
  } else {
    peaks = run::peaks_measured_if_missing(
        names, cfg.device, core::default_peaks_path(),
        [](const std::string& s) {
          say("peaks: measuring {}...\n", s);
          flush(stdout);
        },
        [&] { return interrupt.signal() != 0; });
  }
  for (const auto& b : *peaks) {
    if (!b.peaks)
      say("peaks: {}: not measured ({}); the report's roofline has no ceilings\n", b.backend, b.note);
    else if (b.source == "measured" && b.saved)
      say("peaks: {}: measured in {:.1f} s for the report's roofline and cached (once per device; "
          "`trainscope peaks` shows them)\n",
          b.backend, b.peaks->seconds);
    else if (b.source == "measured")
      say("peaks: {}: measured in {:.1f} s for the report's roofline, but not cached ({}): the next run measures "
          "them again\n",
          b.backend, b.peaks->seconds, b.note);
  }
  return *peaks;
}

// After the training: the exports, the report, the screenshot last (rendering a large picture is what can still end
// the process), then the validation layer's messages. Returns 0, or 1 when one of them failed.
int write_outputs(const TrainOptions& o, const std::vector<core::BackendRun>& runs,
                  const std::vector<core::BackendPeaks>* peaks, bool training_interrupted,
                  std::optional<StdoutToStderr>& stdout_to_stderr, int width, int height) {
  // The outputs first, the screenshot last: rendering a large picture is what can still end the process (before, an
  // OOM kill while rendering a 16384x16384 screenshot lost the report and the CSV files).
  int code = write_exports(o, runs);
  if (!o.report.empty()) {
    try {
      stdout_to_stderr.reset();  // --report -: the JSON alone goes to the real standard output
      core::write_report_json(o.report, o.config, runs, training_interrupted, peaks);
      if (o.report != "-") say("report: {}\n", o.report);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      code = 1;
    }
    if (o.report == "-") stdout_to_stderr.emplace();  // what follows is not the report's
  }
  if (!o.screenshot.empty()) {
    const std::string error = render_dashboard_png(o.config, runs, o.screenshot, width, height);
    if (error.empty()) {
      say("screenshot: {}\n", o.screenshot);
    } else {
      std::cerr << "trainscope: error: " << error << "\n";
      code = 1;
    }
  }
  std::string validation_error;  // --validation: any message fails the run (said last)
  // Every message of the validation layer once, with its count, and the totals (trainers and offscreen renderer).
  if (o.config.validation) {
    const vk::ValidationTotals totals = vk::validation_totals();
    say("\n{}", vk::describe_validation(totals));
    if (vk::validation_failed(totals, &validation_error)) code = 1;
  }
  if (!validation_error.empty()) std::cerr << "trainscope: error: " << validation_error << "\n";
  return code;
}

// The summary (a software GPU said as such) and the median step times.
void print_results(const core::TrainConfig& cfg, const std::optional<std::vector<vk::DeviceInfo>>& devices,
                   const std::vector<core::BackendRun>& runs) {
  SummaryContext context;
  if (devices && !devices->empty()) {
    const int picked = cfg.device >= 0 ? cfg.device : vk::pick_best_device(*devices);
    context.gpu_is_software = (*devices)[static_cast<size_t>(picked)].software;
  }
  std::vector<std::string> names;  // each backend's step against its cached peak (never measured here)
  for (const auto& r : runs) names.push_back(r.name);
  context.peaks = run::cached_peaks(names, cfg.device, core::default_peaks_path());
  print_summary(cfg, runs, context);
  print_step_times(runs);
}

}  // namespace

CLI::App* add_train_command(CLI::App& parent, TrainOptions& o) {
  CLI::App* t = parent.add_subcommand("train", "Train the model (--model mlp, cnn or transformer) on the chosen backends and print per-epoch results, "
                                               "per-kernel timings and the GPU/CPU speedup (headless)");
  add_training_options(t, o);
  t->add_option("--preset", o.preset,
                "A named benchmark set-up; seed-mlp: the classic 'CPU vs GPU training' benchmark, MLP 1024-2048-2048-10 "
                "on random inputs and labels (10240 samples, fixed seed), GELU, AdamW, batch 512, 1 epoch; options "
                "given explicitly override it")
      ->check(CLI::IsMember({"none", "seed-mlp"}))->group("Data");
  t->add_option(
       "--report", o.report,
       "Write a JSON report of the run to FILE (- for standard output), atomically; the path is checked before "
       "training. Its \"roofline\" gives per backend and kernel the arithmetic intensity (FLOP per compulsory "
       "byte), achieved GFLOP/s, the binding ceiling and the % of that roof, against the devices' peaks from "
       "the `trainscope peaks` cache; a device not in the cache is measured once after training (about 15 s) "
       "and cached")
      ->check(non_empty("--report", "a file name, or - for standard output"))
      ->type_name("FILE.json")
      ->default_str("none")
      ->group("Output");
  t->add_option("--screenshot", o.screenshot,
                "At the end, render the dashboard offscreen (no window, no display) to a PNG file")
      ->check(non_empty("--screenshot", "a file name (FILE.png)"))
      ->type_name("FILE.png")
      ->default_str("none")
      ->group("Output");
  t->add_option("--size", o.size, "Size of the --screenshot PNG, pixels")->type_name("WxH")->group("Output");
  t->add_option("--trace", o.trace,
                "Write the last --trace-steps steps of each backend as a Chrome trace (JSON trace-event format, as "
                "PyTorch's profiler exports; opens in Perfetto and chrome://tracing): one process per backend, one "
                "track per GPU queue, host and CPU pool thread, one event per kernel and per host phase (record, "
                "submit, fence wait, read-back) with its FLOPs, bytes, batch and precision; written atomically, the "
                "path checked before training")
      ->check(non_empty("--trace", "a file name, or - for standard output"))
      ->type_name("FILE.json")
      ->default_str("none")
      ->group("Output");
  t->add_option("--trace-steps", o.trace_steps, "The steps per backend in the --trace (the last ones), 1..10000")
      ->type_name("N")->check(checked(kTraceSteps))->group("Output");
  t->add_option(
       "--csv", o.csv,
       "Write steps.csv (one row per step and backend: wall, step and kernel seconds, loss, batch, precision, "
       "lr, loss scale, skipped), kernels.csv (the kernel table per backend, precision and batch) and "
       "peaks.csv (the devices' cached peaks) into DIR (created with its missing parents), all or none; checked before "
       "training")
      ->check(non_empty("--csv", "a directory"))
      ->type_name("DIR")
      ->default_str("none")
      ->group("Output");
  return t;
}

int run_train(TrainOptions& o) {
  core::TrainConfig& cfg = o.config;
  // Ctrl-C / SIGTERM: the first stops every backend after its current step, then the summary and the report (marked
  // "interrupted") follow; a second exits at once. First, before any thread exists (see InterruptWatch).
  std::mutex session_mutex;
  run::Session* session = nullptr;
  run::InterruptWatch interrupt([&](int signal) {
    std::cerr << fmt::format("\ntrainscope: {}: stopping after the current step (again to quit at once)\n",
                             run::InterruptWatch::name(signal));
    std::lock_guard lock(session_mutex);
    if (session) session->request_stop();
  });
  // --report -: the report is standard output's only content; everything else trainscope prints goes to stderr.
  std::optional<StdoutToStderr> stdout_to_stderr;
  if (o.report == "-") stdout_to_stderr.emplace();
  const std::optional<std::vector<vk::DeviceInfo>> devices = finish_config(o);
  if (cfg.epochs == core::kUntilStopped)
    bad_input("--epochs 0: train needs a number of epochs, 1..10000 (only the dashboard trains until stopped)");
  int width = 0, height = 0;
  check_outputs(o, width, height);

  const core::DataSplit data = run::load_data(cfg);
  // What both trainers will hold (a software GPU's device memory is this machine's too), against what it has.
  std::vector<run::BackendSpec> specs = run::backends_from_config(cfg);
  run::preflight(cfg, data, run::new_trainers(specs));
  if (!o.screenshot.empty()) {
    // Rendered after the training, its trainers gone: checked on its own (a 16384x16384 one was OOM-killed in 4 GiB).
    const core::MemoryNeed need = core::picture_memory_need(width, height, "the picture");
    core::check_host_memory(need, fmt::format("--screenshot --size {}x{}", width, height), "use a smaller --size");
  }
  print_header(cfg, data);

  if (interrupt.signal()) return interrupt.exit_code();  // interrupted while loading: nothing trained, no report
  Progress progress(cfg);
  std::vector<core::BackendRun> runs;
  {
    run::SessionOptions options;
    options.timeline_steps = static_cast<size_t>(o.trace_steps);
    // data outlives the session: a shared_ptr that never deletes it (the aliasing constructor).
    run::Session training(cfg, std::shared_ptr<const core::DataSplit>(std::shared_ptr<void>(), &data), std::move(specs),
                          progress, options);
    {
      std::lock_guard lock(session_mutex);
      session = &training;
      if (interrupt.signal()) training.request_stop();
    }
    training.start();
    training.wait();
    std::lock_guard lock(session_mutex);
    session = nullptr;
    runs = training.snapshot(!o.csv.empty());
  }
  progress.finish();
  if (interrupt.signal())
    say("interrupted ({}): every backend stopped after its current step; below, what was done until then "
        "(a partial epoch is not counted as an epoch)\n\n",
        run::InterruptWatch::name(interrupt.signal()));

  print_results(cfg, devices, runs);

  int code = 0;
  for (const auto& r : runs)
    if (!r.error.empty()) code = 1;
  // Whether the training itself was cut short: a signal during the peaks measurement below stops that measurement,
  // but the run it follows was complete and its report says so.
  const bool training_interrupted = interrupt.signal() != 0;
  // The report's roofline: each device's peaks from the cache, or measured now that no trainer runs (not after an
  // interrupt: that run must end at once). Before the screenshot, which draws against the cached peaks.
  std::optional<std::vector<core::BackendPeaks>> peaks;
  if (!o.report.empty()) peaks = report_peaks(cfg, runs, training_interrupted, interrupt);
  if (write_outputs(o, runs, peaks ? &*peaks : nullptr, training_interrupted, stdout_to_stderr, width, height) != 0)
    code = 1;
  return interrupt.signal() ? interrupt.exit_code() : code;
}

}  // namespace app
