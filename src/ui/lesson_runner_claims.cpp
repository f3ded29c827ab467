// The lesson runner's claims (lesson_claim.hpp): taking a "measure" step's figures, judging a claim into the caption
// and notes of its outcome, and the summary slide's table.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/speedup.hpp"
#include "core/timeline.hpp"
#include "ui/lesson_runner.hpp"

namespace ui {
namespace {

// What a backend ran, in words, for the summary: "batch 512, fp16, MLP 784-256-128-10, unfused, input host ..."; a transformer by its blocks, width, heads and context.
std::string settings_text(const core::BackendRun& r) {
  auto sizes = [](const std::vector<int>& v) {
    std::string out;
    for (int x : v) {
      if (!out.empty()) out += '-';
      out += std::to_string(x);
    }
    return out;
  };
  const bool transformer = r.running.model.rfind("transformer", 0) == 0;  // its layer widths say nothing
  const std::string model = !r.running.conv.empty() ? "CNN conv " + sizes(r.running.conv) + " dense " + sizes(r.running.hidden)
                            : transformer           ? r.running.model
                                                    : "MLP " + sizes(r.running.dims);
  std::string s = fmt::format("{}, batch {}, {}", core::to_string(r.running.precision), r.running.batch, model);
  const core::Execution& e = r.running.execution;
  if (e.any()) s += ", " + core::to_string(e);
  if (r.running.input.host()) s += ", input " + core::to_string(r.running.input);
  return s;
}

}  // namespace

void LessonRunner::measure(const LessonStep& step, const DashboardView& view, bool settled, const std::string& moved) {
  LessonMeasurement m;
  m.label = *step.measure;
  m.step = step.number;
  m.point = point_;
  m.settled = settled;
  m.unsettled = settled ? "" : moved;
  const core::BackendRun *gpu = view.run("gpu"), *cpu = view.run("cpu");
  if (gpu && cpu) {
    const core::Speedup sp = core::live_speedup(*gpu, *cpu);
    m.speedup = sp.ok() ? sp.value : 0;
  }
  for (const auto& r : view.runs) {
    MeasuredBackend b;
    b.samples_per_s = r.recent_samples_per_s;
    b.busy = r.timeline ? r.timeline->busy_share() : r.wall_s > 0 ? r.busy_share() : -1;
    b.kernels_current = r.kernels.steps() > 0 && r.kernels.steps_seen() <= r.steps_since_change;
    b.kernels = r.kernels.rows();
    b.roof = view.roof(r);
    m.backends[r.name] = std::move(b);
    if (m.settings.empty()) m.settings = settings_text(r);
  }
  std::string figures;
  for (const auto& [name, b] : m.backends)
    figures += fmt::format("{}{} {:.0f} samples/s", figures.empty() ? "" : ", ", name, b.samples_per_s);
  log_.push_back(fmt::format("step {}: measured \"{}\"{}: {}{}", step.number, m.label,
                             settled ? "" : " (not settled: " + moved + ")", figures,
                             m.speedup > 0 ? fmt::format(", speedup {:.3f}x", m.speedup) : ""));
  measurements_.push_back(std::move(m));
}

void LessonRunner::judge(const LessonStep& step, double now_s) {
  const LessonClaim& claim = *step.claim;
  const ClaimResult r = evaluate_claim(claim, measurements_);
  caption_ = claim_text(*step.caption_claim, r);
  caption_until_s_ = step.caption_seconds ? now_s + *step.caption_seconds : INFINITY;
  shown_captions_.resize(static_cast<size_t>(point_));
  shown_captions_.back() = caption_;
  // The line the tests read: the figures, the comparison, the outcome and the caption it chose.
  const std::string second = claim.b ? claim.b->text : fmt::format("{:g}", claim.number);
  if (r.outcome.empty())
    log_.push_back(fmt::format("claim {}/{} (step {}): {}: not measured ({}); caption: {}", point_, lesson_.points(),
                               step.number, claim.text, r.why, caption_));
  else
    log_.push_back(fmt::format("claim {}/{} (step {}): {} = {:.6g} {} {} = {:.6g}{}: {}; caption: {}", point_,
                               lesson_.points(), step.number, claim.a.text, r.a, claim.op, second, r.b,
                               claim.within ? fmt::format(" (even within {:g})", *claim.within) : "", r.outcome,
                               caption_));
  if (step.notes_claim)
    log_.push_back(fmt::format("notes {}/{}: {}", point_, lesson_.points(), claim_text(*step.notes_claim, r)));
  LessonSummaryRow row;
  row.point = point_;
  row.step = step.number;
  row.claim = claim.text;
  row.first = claim.a.text;
  row.second = claim.b ? claim.b->text : "";
  row.first_value = r.a;
  row.second_value = r.b;
  row.first_text = r.a_text;
  row.second_text = r.b_text;
  row.outcome = r.outcome.empty() ? "not measured" : r.outcome;
  row.text = caption_;
  row.settings = r.settings;
  summary_.push_back(std::move(row));
}

void LessonRunner::write_summary(const LessonStep& step, LessonHost& host) {
  summary_shown_ = true;
  const std::filesystem::path folder = options_.output;
  const std::string csv = (folder / (*step.summary + ".csv")).string();
  try {
    if (const std::string why = lesson_summary_csv_problem(csv); !why.empty())
      throw core::Error(core::ErrorKind::InvalidArgument, why);
    core::write_file_atomically(csv, lesson_summary_csv(summary_), "the lesson's summary table");
    log_.push_back(fmt::format("step {}: summary table saved: {} ({} claims)", step.number, csv, summary_.size()));
  } catch (const core::Error& e) {
    fail(step, e.what());
  }
  host.screenshot((folder / (*step.summary + ".png")).string());
  waiting_for_screenshot_ = true;
  screenshot_step_ = step.number;
}

}  // namespace ui
