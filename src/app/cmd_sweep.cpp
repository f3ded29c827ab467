// `trainscope sweep`: the batch-size sweep (run/sweep.hpp) from the command line: a progress line on stderr, a table
// of samples/s, ms/step, GFLOP/s and GB/s per backend with the speedup per size, the crossover, and --report / --csv.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/print.hpp"
#include "app/sweep_context.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/options.hpp"
#include "core/report.hpp"
#include "run/data.hpp"
#include "run/sweep.hpp"
#include "platform/system.hpp"

namespace app {
namespace {

[[noreturn]] void bad(const std::string& message) { throw core::Error(core::ErrorKind::InvalidArgument, message); }


// "1,2,4" -> {1,2,4} (sorted, each once), each item parsed and checked by `rule` (core/options: its messages).
std::vector<int> int_list(const std::string& text, const core::IntRule& rule) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(static_cast<int>(core::parse_int(std::string_view(text).substr(start, comma - start), rule)));
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// "fused", "naive", "fused,naive" (or "": fused) -> the forms, fused first; anything else is refused.
std::vector<bool> attention_forms(const std::string& text) {
  if (text.empty() || text == "fused") return {false};
  if (text == "naive") return {true};
  if (text == "fused,naive" || text == "naive,fused") return {false, true};
  bad(fmt::format("--attention {}: give fused, naive or fused,naive", text));
}

void print_table(std::FILE* f, const run::SweepResult& r) {
  const std::vector<std::string> series = r.series();
  std::string head = fmt::format("{:>6}", "batch");
  for (const auto& s : series) head += fmt::format("  {:>34}", s + ": samples/s  ms/step GFLOP/s  GB/s");
  say(f, "{}  {:>8}\n", head, "speedup");
  std::vector<int> batches;
  for (const auto& p : r.points)
    if (std::find(batches.begin(), batches.end(), p.batch) == batches.end()) batches.push_back(p.batch);
  for (int b : batches) {
    std::string line = fmt::format("{:>6}", b);
    for (const auto& s : series) {
      const run::SweepPoint* p = r.find(s, b);
      if (!p || !p->measured())
        line += fmt::format("  {:>34}", p ? "skipped" : "-");
      else
        line += fmt::format("  {:>11.0f} {:>8.3g} {:>8.3g} {:>5.3g}", p->samples_per_s, p->ms_per_step, p->gflops,
                            p->gbps);
    }
    const double s = r.speedup(b);
    line += s > 0 ? fmt::format("  {:>7.3g}x", s) : fmt::format("  {:>8}", "-");
    say(f, "{}\n", line);
  }
  for (const auto& p : r.points)
    if (!p.skipped.empty()) say(f, "skipped: {} batch {}: {}\n", p.series, p.batch, p.skipped);
  say(f, "\ncrossover: {}\n", r.crossover_text);
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& parent, SweepOptions& o) {
  CLI::App* s = parent.add_subcommand(
      "sweep", "Batch-size sweep: each backend trains a few timed steps per batch size from the same weights; prints "
               "samples/s, ms/step, GFLOP/s, GB/s, the GPU/CPU speedup per size and the crossover");
  add_training_options(s, o.train);
  // The swept settings replace train's single values.
  for (const char* name : {"--batch", "--threads", "--epochs", "--sequential", "--context", "--attention"})
    s->remove_option(s->get_option(name));
  s->add_option("--batch", o.batches,
                "Batch sizes to sweep, comma-separated, each 1..65536; sizes above the training set or the 16 GiB "
                "memory cap are skipped")
      ->type_name("N[,N...]")->group("Sweep");
  s->add_option("--threads", o.threads, "CPU thread counts to sweep, comma-separated (0: all hardware threads)")
      ->type_name("N[,N...]")->group("Sweep");
  s->add_option("--context", o.contexts,
                "Transformer: context lengths, comma-separated, each 2..4096; two or more (or --attention "
                "fused,naive) make it the context sweep: each length and attention form at one --batch, its ms/step "
                "per backend, the naive scores' memory and naive's step time over fused's")
      ->type_name("N[,N...]")->group("Sweep");
  s->add_option("--attention", o.attention, "Transformer: the attention forms to sweep: fused, naive or fused,naive")
      ->type_name("FORM[,FORM]")->group("Sweep");
  s->add_option("--steps", o.steps, "Timed steps per batch size and backend, 1..1000")->group("Sweep");
  s->add_option("--warmup", o.warmup, "Untimed warm-up steps before them, 0..100")->group("Sweep");
  s->add_option("--report", o.report, "Write the sweep as JSON to FILE (- for standard output), atomically")
      ->check(non_empty("--report", "a file name, or - for standard output"))
      ->type_name("FILE.json")
      ->default_str("none")
      ->group("Output");
  s->add_option(
       "--csv", o.csv,
       "Write the sweep as DIR/sweep.csv (one row per point; DIR created with its missing parents), atomically")
      ->check(non_empty("--csv", "a directory"))
      ->type_name("DIR")
      ->default_str("none")
      ->group("Output");
  return s;
}

int run_sweep(SweepOptions& o) {
  if (o.steps < 1 || o.steps > 1000) bad(fmt::format("--steps {}: must be 1..1000", o.steps));
  if (o.warmup < 0 || o.warmup > 100) bad(fmt::format("--warmup {}: must be 0..100", o.warmup));
  run::SweepOptions so;
  so.batches = int_list(o.batches, core::rules::batch);
  so.cpu_threads = int_list(o.threads, core::rules::threads);
  so.timed_steps = o.steps;
  so.warmup_steps = o.warmup;
  finish_config(o.train);
  so.config = o.train.config;
  const std::vector<int> contexts = o.contexts.empty() ? std::vector<int>{so.config.context}
                                                       : int_list(o.contexts, core::rules::context);
  const std::vector<bool> forms = attention_forms(o.attention);
  if (contexts.size() > 1 || forms.size() > 1) return run_context_sweep(o, so, contexts, forms);
  so.config.context = contexts.front();
  so.config.execution.naive_attention = forms.front();
  core::validate(so.config);
  if (!o.report.empty()) core::check_output_path(o.report, "--report");
  const std::string csv_path = o.csv.empty() ? "" : (std::filesystem::path(o.csv) / "sweep.csv").string();
  if (!csv_path.empty()) core::check_output_dir(o.csv, "--csv", {"sweep.csv"});
  core::check_distinct_outputs({{"--report", o.report}, {"--csv (sweep.csv)", csv_path}});
  std::FILE* out = o.report == "-" ? stderr : stdout;
  const core::DataSplit data = run::load_data(so.config);
  // The default list stops at the training set's size; an explicit size above it is kept and reported as skipped.
  if (o.batches == SweepOptions{}.batches)
    std::erase_if(so.batches, [&](int b) { return b > data.train.count; });
  const std::vector<run::BackendSpec> specs = run::backends_from_config(so.config);
  run::check_sweep_memory(so, data, specs);  // before anything is printed: a refusal is one line
  say(out, "sweep: {} on {} ({} training samples), batch {}, {} warm-up + {} timed steps per point, {}\n",
      core::model_shape(so.config, data).describe(), data.train.name, data.train.count,
      o.batches == SweepOptions{}.batches ? fmt::format("1..{}", so.batches.back()) : o.batches, so.warmup_steps,
      so.timed_steps, core::to_string(so.config.execution));
  flush(out);
  const bool tty = platform::stderr_is_terminal();
  const run::SweepResult r =
      run::run_sweep(so, data, specs, [&](const run::SweepPoint& p, size_t done, size_t total) {
        const std::string what = p.measured() ? fmt::format("{:.0f} samples/s, {:.2f} ms/step", p.samples_per_s,
                                                            p.ms_per_step)
                                              : "skipped";
        std::cerr << fmt::format("{}sweep: {}/{} {} batch {}: {}{}", tty ? "\r\033[K" : "", done, total, p.series,
                                 p.batch, what, tty && done < total ? "" : "\n");
        std::cerr.flush();
      });
  // --report -: standard output holds the JSON alone; the table goes to stderr.
  print_table(o.report == "-" ? stderr : stdout, r);
  // A series that failed (no Vulkan driver, out of memory) fails the command, as a backend that stops fails train;
  // a size the machine cannot take is only a skip.
  int code = 0;
  std::vector<std::string> failed;
  for (const auto& p : r.points)
    if (p.failed && std::find(failed.begin(), failed.end(), p.series) == failed.end()) {
      failed.push_back(p.series);
      std::cerr << fmt::format("trainscope: error: {}: {}\n", p.series, p.skipped);
      code = 1;
    }
  // Each output on its own: one that cannot be written is said, and the others are still written.
  if (!o.report.empty()) {
    try {
      core::write_json_atomically(o.report, run::sweep_json(so, r));
      if (o.report != "-") say(out, "report: {}\n", o.report);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      code = 1;
    }
  }
  if (!csv_path.empty()) {
    try {
      core::make_output_dir(o.csv, "the --csv directory");
      core::write_file_atomically(csv_path, run::sweep_csv(r), "the sweep's CSV");
      say(out, "csv: {}\n", csv_path);
    } catch (const core::Error& e) {
      std::cerr << "trainscope: error: " << e.what() << "\n";
      code = 1;
    }
  }
  return code;
}

}  // namespace app
