// `trainscope sweep --context N,N,... [--attention fused,naive]`: a transformer's context sweep (issue 35). At one
// batch size, every context length in each attention form: each backend trains a few timed steps from the same
// weights (run::run_sweep's points, one at a time); the table gives ms/step per backend, the naive form's scores in
// memory, and naive's time against fused's per context: attention's cost grows with the context squared, and with it
// what fusion saves.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/print.hpp"
#include "app/sweep_context.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/report.hpp"
#include "core/run_plan.hpp"
#include "run/data.hpp"
#include "ui/panel_memory.hpp"

namespace app {
namespace {

// One (context, attention form) of the sweep: its backends' points, or why it was not measured.
struct ContextRow {
  int context = 0;
  bool naive = false;
  size_t scores_bytes = 0;  // the naive scores of every attention layer (core::MemoryUsage::attention_scores)
  std::vector<run::SweepPoint> points;
  std::string skipped;
  const run::SweepPoint* find(const std::string& series) const {
    for (const auto& p : points)
      if (p.series == series && p.measured()) return &p;
    return nullptr;
  }
};

const char* form(bool naive) { return naive ? "naive" : "fused"; }

ContextRow measure(const run::SweepOptions& base, int context, bool naive, const std::vector<run::BackendSpec>& specs,
                   size_t index, size_t total) {
  ContextRow row;
  row.context = context;
  row.naive = naive;
  run::SweepOptions o = base;
  o.config.context = context;
  o.config.execution.naive_attention = naive;
  try {
    core::validate(o.config);
    const core::DataSplit data = run::load_data(o.config);
    row.scores_bytes = core::run_plan(o.config, data).layout.usage(false).attention_scores;
    run::check_sweep_memory(o, data, specs);
    row.points = run::run_sweep(o, data, specs).points;
  } catch (const core::Error& e) {  // a context this machine or the kernels cannot take: a skipped row
    row.skipped = e.what();
  }
  std::cerr << fmt::format("sweep: {}/{} context {} {}: {}\n", index, total, context, form(naive),
                           row.skipped.empty() ? "measured" : "skipped");
  return row;
}

std::vector<std::string> series_of(const std::vector<ContextRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    for (const auto& p : r.points)
      if (std::find(out.begin(), out.end(), p.series) == out.end()) out.push_back(p.series);
  return out;
}

void print(std::FILE* f, const std::vector<ContextRow>& rows) {
  const std::vector<std::string> series = series_of(rows);
  std::string head = fmt::format("{:>7}  {:>9}  {:>12}", "context", "attention", "scores (mem)");
  for (const auto& s : series) head += fmt::format("  {:>18}", s + " ms/step");
  say(f, "{}\n", head);
  for (const auto& r : rows) {
    std::string line = fmt::format("{:>7}  {:>9}  {:>12}", r.context, form(r.naive), ui::format_bytes(r.scores_bytes));
    for (const auto& s : series) {
      const run::SweepPoint* p = r.find(s);
      line += p ? fmt::format("  {:>18.4g}", p->ms_per_step) : fmt::format("  {:>18}", "skipped");
    }
    say(f, "{}\n", line);
  }
  // Per context with both forms measured: naive's step time over fused's, per backend.
  for (const auto& n : rows) {
    if (!n.naive) continue;
    for (const auto& fu : rows) {
      if (fu.naive || fu.context != n.context) continue;
      std::string line;
      for (const auto& s : series)
        if (const run::SweepPoint *a = n.find(s), *b = fu.find(s); a && b)
          line += fmt::format("{}{} {:.2f}x", line.empty() ? "" : ", ", s, a->ms_per_step / b->ms_per_step);
      if (!line.empty()) say(f, "context {}: naive takes {} fused's step time\n", n.context, line);
    }
  }
  for (const auto& r : rows)
    if (!r.skipped.empty()) say(f, "skipped: context {} {}: {}\n", r.context, form(r.naive), r.skipped);
}

nlohmann::json rows_json(const run::SweepOptions& o, const std::vector<ContextRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : r.points)
      points.push_back({{"series", p.series}, {"device", p.device}, {"steps", p.steps}, {"ms_per_step", p.ms_per_step},
                        {"samples_per_s", p.samples_per_s}, {"gflops", p.gflops}, {"gbps", p.gbps},
                        {"skipped", p.skipped}});
    out.push_back({{"context", r.context}, {"attention", form(r.naive)}, {"batch", o.batches.front()},
                   {"attention_scores_bytes", r.scores_bytes}, {"points", points}, {"skipped", r.skipped}});
  }
  return {{"context_sweep", out}};
}

std::string rows_csv(const run::SweepOptions& o, const std::vector<ContextRow>& rows) {
  std::string csv = "context,attention,batch,attention_scores_bytes,series,ms_per_step,samples_per_s,gflops,gbps\n";
  for (const auto& r : rows)
    for (const auto& p : r.points)
      if (p.measured())
        csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", r.context, form(r.naive), o.batches.front(), r.scores_bytes,
                           p.series, p.ms_per_step, p.samples_per_s, p.gflops, p.gbps);
  return csv;
}

}  // namespace

int run_context_sweep(const SweepOptions& cli, const run::SweepOptions& so, const std::vector<int>& contexts,
                      const std::vector<bool>& forms) {
  if (so.config.model != core::ModelKind::Transformer)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      "--context with several lengths (or --attention fused,naive) sweeps a transformer: add "
                      "--dataset reverse or --dataset fortunes");
  if (so.batches.size() != 1)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      "a context sweep measures one batch size: give --batch N, e.g. --batch 16");
  run::SweepOptions base = so;
  base.config.batch = so.batches.front();
  const std::vector<run::BackendSpec> specs = run::backends_from_config(base.config);
  std::FILE* out = cli.report == "-" ? stderr : stdout;
  say(out, "context sweep: transformer {} blocks, embed {}, {} heads on {}, batch {}, {} warm-up + {} timed steps per "
      "point\n", base.config.layers, base.config.embed, base.config.heads, base.config.dataset, base.config.batch,
      base.warmup_steps, base.timed_steps);
  flush(out);
  std::vector<ContextRow> rows;
  for (int context : contexts)
    for (bool naive : forms)
      rows.push_back(measure(base, context, naive, specs, rows.size() + 1, contexts.size() * forms.size()));
  print(out, rows);
  int code = 0;
  bool any = false;
  for (const auto& r : rows) any |= !r.points.empty();
  if (!any) {
    std::cerr << "trainscope: error: no point of the context sweep was measured (see skipped above)\n";
    code = 1;
  }
  try {
    if (!cli.report.empty()) {
      core::write_json_atomically(cli.report, rows_json(base, rows));
      if (cli.report != "-") say(out, "report: {}\n", cli.report);
    }
    if (!cli.csv.empty()) {
      core::make_output_dir(cli.csv, "the --csv directory");
      const std::string path = (std::filesystem::path(cli.csv) / "context_sweep.csv").string();
      core::write_file_atomically(path, rows_csv(base, rows), "the context sweep's CSV");
      say(out, "csv: {}\n", path);
    }
  } catch (const core::Error& e) {
    std::cerr << "trainscope: error: " << e.what() << "\n";
    code = 1;
  }
  return code;
}

}  // namespace app
