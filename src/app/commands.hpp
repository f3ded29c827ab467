// The subcommands of the trainscope executable: how main() registers them with CLI11 and runs the chosen one.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "core/config.hpp"

namespace app {

// What `trainscope train` collects from the command line: the TrainConfig plus the options that need converting.
struct TrainOptions {
  core::TrainConfig config;
  std::string hidden = "256,128";  // core::parse_hidden
  std::string activation = "relu";
  std::string optimizer = "adamw";
  std::string backend = "gpu,cpu";  // split at commas into config.backends
  std::string report;  // report.json path, empty: none
};

// Registers `train` and its options (defaults shown in --help) on `parent`.
CLI::App* add_train_command(CLI::App& parent, TrainOptions& options);
// Runs a training session with the parsed options. Returns the exit code (0, or 1 if a backend stopped with an
// error or the report could not be written); throws core::Error for bad input (exit 2) and data errors (exit 1).
int run_train(TrainOptions& options);

CLI::App* add_devices_command(CLI::App& parent);
int run_devices();

}  // namespace app
