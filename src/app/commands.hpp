// The subcommands of the trainscope executable: how main() registers them with CLI11 and runs the chosen one.
#pragma once
#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/metrics.hpp"
#include "vk/devices.hpp"

namespace app {

// What `trainscope train` collects from the command line: the TrainConfig plus the options that need converting.
struct TrainOptions {
  core::TrainConfig config;
  // Each training option's text as given (or its default), by the settings schema's key (core/settings_schema.hpp):
  // CLI11 writes here, finish_config turns the options given into `config`.
  std::map<std::string, std::string> texts;
  std::string report;  // report.json path, empty: none
  std::string screenshot;         // train: PNG of the dashboard rendered offscreen at the end; empty: none
  std::string size = "1600x900";  // of that PNG (and of the dashboard window)
  std::string preset = "none";    // train: "seed-mlp" (apply_preset)
  std::string trace;              // train: Chrome trace JSON of the last trace_steps steps; empty: none
  int trace_steps = 20;           // train: the steps per backend the trace keeps (the last ones)
  std::string csv;                // train: folder for steps.csv, kernels.csv, peaks.csv; empty: none
  CLI::App* command = nullptr;    // the subcommand the options were registered on (to see which were given)
};

// Registers the options shared by `train` and `dashboard` (data, model, optimisation, execution) on `command`.
void add_training_options(CLI::App* command, TrainOptions& options);
// Converts and validates the options into options.config; lists the Vulkan devices when the gpu backend is used
// (nullopt when there is no Vulkan) and checks --device against them. Throws core::Error(InvalidArgument).
std::optional<std::vector<vk::DeviceInfo>> finish_config(TrainOptions& options);
// "1600x900" -> 1600, 900; throws core::Error(InvalidArgument) unless both are 64..16384.
void parse_size(const std::string& text, int& width, int& height);

// Renders the dashboard of a finished run offscreen (no window, no display) and writes it to a PNG at `path`.
// Returns "" or the error message.
std::string render_dashboard_png(const core::TrainConfig& cfg, const std::vector<core::BackendRun>& runs,
                                 const std::string& path, int width, int height);

// What `trainscope dashboard` adds: the window's size, fonts and scripted runs.
struct DashboardOptions {
  int frames = 0;              // render this many frames, then exit (0: until the window is closed)
  std::string screenshot;      // with --frames: the last frame as a PNG here
  float font_size = 0;         // 0: the remembered setting
  bool presentation = false;   // large, high-contrast (also remembered)
  int max_fps = 30;            // frame-rate cap, so that a software GPU leaves the trainers their cores
  std::string script;          // a lesson file (ui/lesson.hpp), "" for none
  bool autoplay = false;       // play the lesson unattended (else the teacher paces it)
  std::string steady;          // "N,S": every steady condition needs N steps and S seconds ("" : the lesson's)
  std::string output;          // the lesson's screenshots folder, "" for the default (ui::default_lesson_output)
};

CLI::App* add_dashboard_command(CLI::App& parent, TrainOptions& train, DashboardOptions& display);
// Opens the window and trains until it is closed (or --frames are drawn). Returns the exit code.
int run_dashboard(TrainOptions& train, DashboardOptions& display);

// Registers `train` and its options (defaults shown in --help) on `parent`.
CLI::App* add_train_command(CLI::App& parent, TrainOptions& options);
// Runs a training session with the parsed options. Returns the exit code (0, or 1 if a backend stopped with an
// error or the report could not be written); throws core::Error for bad input (exit 2) and data errors (exit 1).
int run_train(TrainOptions& options);

// What `trainscope bench` collects from the command line (app/cmd_bench.cpp).
struct BenchOptions {
  std::string preset = "none";  // "seed-mlp": MLP 1024-2048-2048-10, GELU, batch 512
  std::string dataset = "fashion-mnist";
  int spiral_classes = 3;
  std::string hidden = "256,128";
  int batch = 128;
  std::string sizes = "256,512,1024,2048";
  std::string backend = "cpu,gpu";
  std::string threads = "1,all";
  int repeats = 5;
  double min_seconds = 0.2;
  std::string clock = "wall";  // "cpu": the calling thread's CPU time (--threads 1 only)
  int device = -1;
  std::string openblas = "default,best";
  int openblas_l2_kb = -1;  // -1: the environment's OPENBLAS_L2_SIZE, else unset
  std::string report;
};

CLI::App* add_bench_command(CLI::App& parent, BenchOptions& options);
// Measures and prints the GEMM table; returns 0, or 1 if a backend or the OpenBLAS reference failed or the report
// could not be written. Throws core::Error(InvalidArgument) for bad options.
int run_bench(BenchOptions& options);

// What `trainscope peaks` collects from the command line (app/cmd_peaks.cpp).
struct PeaksOptions {
  std::string backend = "gpu,cpu";
  int device = -1;
  bool remeasure = false;
  int repeats = 5;
  int stream_mib = 0;  // 0: cpu::stream_array_bytes()
  std::string report;
};

CLI::App* add_peaks_command(CLI::App& parent, PeaksOptions& options);
// Shows the cached peaks of each device, measuring (and caching) those missing, or all with --remeasure. Returns 0,
// or 1 if a device could not be measured or the report not written. Throws core::Error(InvalidArgument).
int run_peaks(PeaksOptions& options);

// What `trainscope sweep` collects (app/cmd_sweep.cpp): train's data, model and execution options, and the sweep's.
struct SweepOptions {
  TrainOptions train;
  std::string batches = "1,2,4,8,16,32,64,128,256,512,1024,2048,4096";  // the default stops at the training set
  std::string threads = "0";  // CPU thread counts, one CPU series each
  std::string contexts;       // transformer: context lengths ("" : the default); several: the context sweep
  std::string attention;      // transformer: "fused", "naive" or "fused,naive" ("": fused)
  int steps = 5;              // timed steps per point
  int warmup = 2;
  std::string report;         // JSON, "-": stdout
  std::string csv;            // directory for sweep.csv
};

CLI::App* add_sweep_command(CLI::App& parent, SweepOptions& options);
// Runs the sweep and prints its table and crossover; returns 0, or 1 when a series failed (no Vulkan device, out of
// memory) or an output could not be written. Throws core::Error for bad options or data, a model too large for the
// machine's memory included (InvalidArgument).
int run_sweep(SweepOptions& options);

// "--backend gpu,cpu" -> {"gpu", "cpu"}: each gpu or cpu, none empty or named twice. `allowed` ends the message
// ("gpu, cpu, or gpu,cpu"). Throws core::Error(InvalidArgument) "--backend gpu,gpu: gpu is named twice (...)".
std::vector<std::string> parse_backends(const std::string& text, std::string_view allowed);
// --device N (N >= 0): refuses an index beyond this machine's Vulkan devices with the one line train gives (exit 2).
// Without any Vulkan device nothing is refused here: the GPU side says so when it starts.
void check_device_index(int device);

CLI::App* add_devices_command(CLI::App& parent);
int run_devices();

}  // namespace app
