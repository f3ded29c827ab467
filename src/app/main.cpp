// trainscope's entry point: parses the command line (CLI11), runs the subcommand, and maps errors to exit codes:
// 0 success, 1 a data/Vulkan/file problem, a backend that stopped or output that could not be written (standard
// output included), 2 bad command-line input (one line on stderr).
#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/print.hpp"
#include "core/error.hpp"
#include "core/memory_budget.hpp"
#include "platform/signals.hpp"
#include "run/explain.hpp"
#include "vk/setup.hpp"

#ifdef TRAINSCOPE_KEEP_LIBRARIES_LOADED
// Sanitizer builds only (as tests/doctest_main.cpp, which says why): libraries the Vulkan loader opens stay loaded
// until exit, so that LeakSanitizer sees the memory their globals still point to, and names who allocated.
extern "C" int dlclose(void*) { return 0; }
#endif

namespace {

// CLI11's messages, made one line in trainscope's voice, with the help command of the subcommand that failed.
std::string one_line(const CLI::Error& e, const std::string& help_command) {
  std::string what = e.what();
  const std::string convert = "Could not convert: ";
  if (what.rfind(convert, 0) == 0) {  // "Could not convert: --lr = abc" (every typed option takes a number)
    const size_t eq = what.find(" = ");
    if (eq != std::string::npos)
      what = fmt::format("{} {}: not a valid number", what.substr(convert.size(), eq - convert.size()),
                         what.substr(eq + 3));
  }
  const std::string repeated = ": At Most 1 required but received ";  // "--lr: At Most 1 required but received 2"
  if (const size_t at = what.find(repeated); at != std::string::npos)
    what = fmt::format("{}: given {} times; give it once", what.substr(0, at), what.substr(at + repeated.size()));
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return fmt::format("trainscope: error: {}; see {} --help", what, help_command);
}

int fail(const std::string& message, int code) {
  std::cerr << "trainscope: error: " << message << "\n";
  return code;
}

// What was printed must have arrived: a full disk under `> file`, /dev/full or a reader that went away fail the
// command (exit 1 and a line on stderr) instead of ending with 0 and an empty or cut file.
int check_stdout(int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  int error = app::stdout_write_error.load();
  if (error == 0 && !flushed) error = errno ? errno : EIO;
  if (error == 0 && (std::ferror(stdout) || std::cout.fail())) error = EIO;
  if (error == 0) return code;
  fail(fmt::format(
           "cannot write to standard output: {}; {}", std::strerror(error),
           error == EPIPE ? "the program reading it stopped early" : "free some disk space or send it elsewhere"),
       1);
  return code == 0 ? 1 : code;
}

int run_command(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // A reader that closes its end early (`| head`, a FIFO given as --trace) is a write error (EPIPE) that each output
  // reports, not a SIGPIPE that kills the program before its summary, report and other files.
  platform::ignore_broken_pipe();
  return check_stdout(run_command(argc, argv));
}

namespace {

int run_command(int argc, char** argv) {
  CLI::App cli{
      "trainscope: the same small neural network (an MLP, a CNN or a small transformer) trained side by side with Vulkan compute shaders and a CPU "
      "thread pool, every kernel timed, to show why GPUs win at deep learning (and when they do not).",
      "trainscope"};
  cli.option_defaults()->always_capture_default();  // --help shows every default (inherited by the subcommands)
  cli.require_subcommand(1);
  cli.footer("With no subcommand (no arguments, or options only), trainscope opens the dashboard: "
             "`trainscope dashboard`. Environment, for experiments (docs/benchmarks.md): TRAINSCOPE_CPU_SIMD, "
             "TRAINSCOPE_GEMM_PATH, TRAINSCOPE_GEMM_TILES, TRAINSCOPE_SPLIT_K; TRAINSCOPE_DEVICE_PROFILE=spec-min|"
             "desktop-discrete|FILE.json clamps the GPU's limits to another device class (docs/gpu.md); "
             "TRAINSCOPE_MEMORY_LIMIT=SIZE (e.g. 3G): at most this much host memory (every command checks what it "
             "will allocate against the machine's available memory first, docs/cli.md, Memory); "
             "TRAINSCOPE_INJECT_FAULT (tests only).");

  app::TrainOptions train_options, dashboard_train_options;
  app::DashboardOptions dashboard_options;
  CLI::App* train = app::add_train_command(cli, train_options);
  CLI::App* dashboard = app::add_dashboard_command(cli, dashboard_train_options, dashboard_options);
  app::BenchOptions bench_options;
  CLI::App* bench = app::add_bench_command(cli, bench_options);
  app::PeaksOptions peaks_options;
  CLI::App* peaks = app::add_peaks_command(cli, peaks_options);
  app::SweepOptions sweep_options;
  CLI::App* sweep = app::add_sweep_command(cli, sweep_options);
  CLI::App* devices = app::add_devices_command(cli);

  // No subcommand (no arguments, or options only): `dashboard`.
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool help = !args.empty() && (args[0] == "-h" || args[0] == "--help");
  if (args.empty() || (args[0].size() > 1 && args[0][0] == '-' && !help)) args.insert(args.begin(), "dashboard");
  if (!help && args[0] != "train" && args[0] != "devices" && args[0] != "dashboard" && args[0] != "bench" &&
      args[0] != "peaks" && args[0] != "sweep")
    return fail(fmt::format("{}: unknown command (allowed: dashboard, train, sweep, bench, peaks, devices); "
                            "see trainscope --help",
                            args[0]),
                2);
  std::vector<const char*> arg_ptrs{argv[0]};
  for (const auto& a : args) arg_ptrs.push_back(a.c_str());

  const auto help_command = [&] {
    if (train->parsed()) return std::string("trainscope train");
    if (dashboard->parsed()) return std::string("trainscope dashboard");
    if (devices->parsed()) return std::string("trainscope devices");
    if (bench->parsed()) return std::string("trainscope bench");
    if (peaks->parsed()) return std::string("trainscope peaks");
    if (sweep->parsed()) return std::string("trainscope sweep");
    return std::string("trainscope");
  };
  cli.failure_message([&](const CLI::App*, const CLI::Error& e) { return one_line(e, help_command()) + "\n"; });
  try {
    cli.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    const int code = cli.exit(e);  // prints the help, or our one-line failure message
    return code == 0 ? 0 : 2;
  } catch (const core::Error& e) {  // a value refused by a core/options rule (app/option_checks.hpp)
    return fail(e.what(), e.kind() == core::ErrorKind::InvalidArgument ? 2 : 1);
  }

  try {
    vk::check_fault_environment();  // (tests only) a bad value is bad input
    if (train->parsed()) return app::run_train(train_options);
    if (dashboard->parsed()) return app::run_dashboard(dashboard_train_options, dashboard_options);
    if (devices->parsed()) return app::run_devices();
    if (bench->parsed()) return app::run_bench(bench_options);
    if (peaks->parsed()) return app::run_peaks(peaks_options);
    if (sweep->parsed()) return app::run_sweep(sweep_options);
  } catch (const core::Error& e) {  // with the command-line hint of a Vulkan failure
    return fail(run::explain(e), e.kind() == core::ErrorKind::InvalidArgument ? 2 : 1);
  } catch (const std::bad_alloc&) {  // past the up-front memory check (core/memory_budget.hpp)
    return fail(core::out_of_memory_text("while running"), 1);
  } catch (const std::exception& e) {
    return fail(fmt::format("unexpected error: {}", e.what()), 1);
  }
  return fail("no subcommand; see trainscope --help", 2);
}

}  // namespace
