// Lesson claims (ui/lesson_claim.hpp), without a window: the syntax and its errors, the figures a "measure" step takes,
// the outcome and the text shown for it, "Not measured here" for figures that did not settle, the summary table, the
// view that going back shows; and the shipped lessons: no plain caption or note states a device-dependent outcome
// (every such statement is a claim), and docs/lessons.md lists exactly the lessons that ship.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "lesson_claims_util.hpp"
#include "lesson_test_util.hpp"
#include "ui/lesson.hpp"
#include "ui/figure_text.hpp"
#include "ui/lesson_claim.hpp"
#include "ui/lesson_runner.hpp"

using test::FakeHost;
using test::parse_error;
using test::run_of;
using test::view_of;
namespace fs = std::filesystem;

namespace {

// Two steady measurements ("fp32", then "fp16") of the CPU at `fp32` and `fp16` samples/s, then the claim step
// `claim` (its JSON keys); returns the runner after it ran, the caption in runner.caption().
struct Played {
  ui::LessonRunner runner;
  FakeHost host;
  std::vector<std::string> log;
};

std::unique_ptr<Played> play(double fp32, double fp16, const std::string& claim, long steps = 5) {
  const std::string text = R"({"title": "t", "steps": [
      {"when": {"steady": {"steps": 2, "seconds": 0}}, "timeout": 1, "measure": "fp32"},
      {"set": {"precision": "fp16"}},
      {"when": {"steady": {"steps": 2, "seconds": 0}}, "timeout": 1, "measure": "fp16"},
      {"next": true, )" + claim + R"(}]})";
  auto p = std::make_unique<Played>(Played{ui::LessonRunner(ui::parse_lesson(text, "l.json")), {}, {}});
  core::TrainConfig cfg;
  auto view = [&](core::Precision precision, double rate) {
    cfg.precision = precision;
    core::BackendRun cpu = run_of("cpu", cfg, steps);
    cpu.recent_samples_per_s = rate;
    return view_of(cfg, {cpu});
  };
  double t = 0;
  // One frame in fp32 (its measurement; then the "set"), then frames showing fp16 set and running.
  p->runner.update(t += 0.5, view(core::Precision::FP32, fp32), p->host);
  for (int i = 0; i < 8; ++i) p->runner.update(t += 0.5, view(core::Precision::FP16, fp16), p->host);
  for (auto& l : p->runner.take_log()) p->log.push_back(l);
  return p;
}

const std::string kSpeedClaim = R"j("claim": {"is": "cpu.samples_per_s@fp16 > cpu.samples_per_s@fp32", "within": 0.05},
    "caption": {"yes": "Here 16 bits are {a/b}x faster on the CPU ({a} vs {b} samples/s)",
                "no": "Here 16 bits are {b/a}x slower on the CPU ({a} vs {b} samples/s)",
                "even": "About even ({a} vs {b})"},
    "notes": {"yes": "notes yes {a}", "no": "notes no {b}", "even": "notes even"})j";

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "lesson: " + l + "\n";  // as the dashboard prints them
  return s;
}

fs::path source_dir() {
  const char* source = std::getenv("TRAINSCOPE_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "set TRAINSCOPE_SOURCE_DIR (ctest does)");
  return source;
}

}  // namespace

TEST_CASE("a claim is read as written: its figures, comparison, margin and a text per outcome") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"when": {"steady": true}, "measure": "b32"},
      {"when": {"steady": true}, "measure": "cnn-8",
       "claim": {"is": "gpu.share(conv2d*|max_pool*)@cnn-8 < speedup@b32", "within": 0.1},
       "caption": {"yes": "y {a}", "no": "n {b}", "even": "e {{literal}}"}, "notes": "plain notes"},
      {"claim": "cpu.roof(matmul*) > 0.5", "caption": {"yes": "y", "no": "n"}, "notes": {"yes": "ny", "no": "nn"}},
      {"summary": "today"}]})",
                                        "l.json");
  REQUIRE(l.steps.size() == 4);
  CHECK(*l.steps[0].measure == "b32");
  const ui::LessonClaim& c = *l.steps[1].claim;
  CHECK(c.a.kind == ui::ClaimFigure::Kind::Share);
  CHECK(c.a.backend == "gpu");
  CHECK(c.a.pattern == "conv2d*|max_pool*");
  CHECK(c.a.label == "cnn-8");
  CHECK(c.op == '<');
  REQUIRE(c.b);
  CHECK(c.b->kind == ui::ClaimFigure::Kind::Speedup);
  CHECK(c.b->label == "b32");
  CHECK(*c.within == 0.1);
  CHECK(l.steps[1].caption_claim->even == "e {{literal}}");
  CHECK(*l.steps[1].notes == "plain notes");
  const ui::LessonClaim& d = *l.steps[2].claim;
  CHECK(d.a.kind == ui::ClaimFigure::Kind::Roof);
  CHECK(d.a.label.empty());
  CHECK_FALSE(d.b);
  CHECK(d.number == 0.5);
  CHECK(l.steps[2].notes_claim->no == "nn");
  CHECK(*l.steps[3].summary == "today");
}

TEST_CASE("a malformed claim is refused naming the step, the field and what to write") {
  const std::string head = R"({"title": "t", "steps": [{"when": {"steady": true}, "measure": "m"}, )";
  const std::string yn = R"("caption": {"yes": "y", "no": "n"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"title": "t", "steps": [{"next": true, "measure": "m"}]})",
       "step 1: \"measure\": goes with \"when\": {\"steady\": ...}"},
      {head + R"({"when": {"steady": true}, "measure": "a b"}]})", "is a name of letters, digits"},
      {head + R"({"claim": "gpu.speed > 1", )" + yn + "}]}",
       "step 2: \"claim\": cannot read \"gpu.speed > 1\": \"speed\" is no figure of a backend"},
      {head + R"({"claim": "speedup 1", )" + yn + "}]}", "expected > or < after speedup"},
      {head + R"({"claim": "speedup > ", )" + yn + "}]}", "expected a figure"},
      {head + R"({"claim": "speedup > 1 > 2", )" + yn + "}]}", "unexpected \"> 2\""},
      {head + R"({"claim": "gpu.share > 0.5", )" + yn + "}]}", "share needs the kernels it is about in parentheses"},
      {head + R"({"claim": "fpga.busy > 0.5", )" + yn + "}]}", "\"fpga\" is no figure"},
      {head + R"({"claim": "speedup@ > 1", )" + yn + "}]}", "expected a measurement's name after '@'"},
      {head + R"({"claim": "speedup > 1", "caption": "plain"}]})", "a claim's caption is a text per outcome"},
      {head + R"({"claim": "speedup > 1", "caption": {"yes": "y"}}]})", "\"caption\": missing \"no\""},
      {head + R"({"claim": "speedup > 1", "caption": {"yes": "y", "no": "n", "even": "e"}}]})",
       "\"caption.even\": unknown key"},
      {head + R"({"claim": {"is": "speedup > 1", "within": 0.1}, )" + yn + "}]}", "missing \"even\""},
      {head + R"({"claim": {"is": "speedup > 1", "within": 5}, )" + yn + "}]}", "\"claim.within\": must be a number"},
      {head + R"({"claim": {"within": 0.1}, )" + yn + "}]}", "\"claim\": missing \"is\""},
      {head + R"({"claim": "speedup > 1", "caption": {"yes": "{c}", "no": "n"}}]})",
       "\"caption.yes\": has {c}: the placeholders are {a}, {b}, {a/b} and {b/a}"},
      {head + R"({"claim": "speedup > 1", "caption": {"yes": "{a", "no": "n"}}]})", "has a '{' without its '}'"},
      {head + R"({"claim": "speedup > 1", )" + yn + R"(, "notes": {"yes": "y"}}]})", "\"notes\": missing \"no\""},
      {head + R"({"claim": "speedup@fp16 > 1", )" + yn + "}]}",
       "step 2: \"claim\": speedup@fp16: no step before this one measures \"fp16\""},
      {R"({"title": "t", "steps": [{"claim": "speedup > 1", )" + yn + "}]}",
       "step 1: \"claim\": speedup needs a measurement before it"},
      {R"({"title": "t", "steps": [{)" + yn + "}]}", "a text per outcome goes with a \"claim\""},
      {R"({"title": "t", "steps": [{"summary": "s", "screenshot": "s.png"}]})", "takes its own picture"},
      {R"({"title": "t", "steps": [{"summary": "s.png"}]})", "\"summary\": \"s.png\" is a file name"},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    const std::string error = parse_error(text);
    CHECK_MESSAGE(error.find(expected) != std::string::npos, error);
    CHECK(error.rfind("l.json", 0) == 0);
  }
}

TEST_CASE("kernel name patterns: * for any characters, | between alternatives") {
  CHECK(ui::kernel_name_matches("conv2d*", "conv2d_forward"));
  CHECK(ui::kernel_name_matches("*backward*", "conv2d_backward_data"));
  CHECK(ui::kernel_name_matches("matmul_forward", "matmul_forward"));
  CHECK_FALSE(ui::kernel_name_matches("matmul_forward", "matmul_forward2"));
  CHECK_FALSE(ui::kernel_name_matches("conv*", "max_pool_forward"));
  CHECK(ui::kernel_name_matches("act_*|bias_*|adamw*", "bias_backward"));
  CHECK(ui::kernel_name_matches("act_*|bias_*|adamw*", "adamw_update"));
  CHECK_FALSE(ui::kernel_name_matches("act_*|bias_*", "matmul_forward"));
  CHECK(ui::kernel_name_matches("*", "anything"));
}

TEST_CASE("a claim shows the text of the outcome measured, with the figures in it; the notes too") {
  SUBCASE("faster") {
    auto p = play(12300, 16000, kSpeedClaim);
    CHECK(p->runner.caption() == "Here 16 bits are 1.3x faster on the CPU (16.0k vs 12.3k samples/s)");
    const std::string log = joined(p->log);
    CHECK(log.find("notes 2/2: notes yes 16.0k") != std::string::npos);
    CHECK(log.find("measured \"fp32\": cpu 12300 samples/s") != std::string::npos);
  }
  SUBCASE("slower") {
    auto p = play(16000, 12300, kSpeedClaim);
    CHECK(p->runner.caption() == "Here 16 bits are 1.3x slower on the CPU (12.3k vs 16.0k samples/s)");
    CHECK(joined(p->log).find("notes 2/2: notes no 16.0k") != std::string::npos);
  }
  SUBCASE("even within the margin") {
    auto p = play(12300, 12500, kSpeedClaim);
    CHECK(p->runner.caption() == "About even (12.5k vs 12.3k)");
  }
  SUBCASE("the log line the played-lesson tests read agrees with the lesson's texts") {
    auto p = play(12300, 16000, kSpeedClaim);
    const std::string text = R"({"title": "t", "steps": [{}, {}, {}, {"next": true, )" + kSpeedClaim + "}]}";
    const test::ClaimCheck c = test::check_claims(joined(p->log), nlohmann::json::parse(text));
    CHECK(c.shown == 1);
    CHECK(c.not_measured == 0);
  }
  SUBCASE("figures that never settle are not judged: the caption says so") {
    auto p = play(12300, 16000, kSpeedClaim, 1);  // 1 step since the change: never steady (2 wanted)
    CHECK(p->runner.caption().rfind("Not measured here: the figures of \"fp16\" did not settle", 0) == 0);
    CHECK(p->runner.summary().at(0).outcome == "not measured");
  }
}

TEST_CASE("a claim's speedup reads as the race header shows it: never 0.000x for a figure that is not zero") {
  using Kind = ui::ClaimFigure::Kind;
  CHECK(ui::format_figure(Kind::Speedup, 24.4) == "24x");  // the header's big figure over the same run
  CHECK(ui::format_figure(Kind::Speedup, 24.4) == ui::speedup_figure(24.4));
  CHECK(ui::format_figure(Kind::Speedup, 2.5) == "2.50x");
  CHECK(ui::format_figure(Kind::Speedup, 0.0959) == "0.096x");
  CHECK(ui::format_figure(Kind::Speedup, 3.6e-6) == "<0.001x");  // a GPU 277474x slower: three decimals said 0.000x
}

TEST_CASE("the kernel figures: share, intensity, GFLOP/s, memory and roof shares; none from a stale table") {
  ui::LessonMeasurement m;
  m.label = "m";
  ui::MeasuredBackend gpu;
  gpu.kernels_current = true;
  auto row = [](const char* name, double pct, double gflops, double gbps) {
    core::KernelRow r;
    r.name = name;
    r.pct_of_step = pct;
    r.gflops = gflops;
    r.gbps = gbps;
    return r;
  };
  gpu.kernels = {row("conv2d_forward", 30, 40, 2), row("conv2d_backward_data", 25, 20, 1),
                 row("max_pool_backward", 24, 0.5, 5), row("matmul_forward", 21, 10, 1)};
  gpu.roof.compute_gflops = 100;
  gpu.roof.bandwidth_gbps = 10;
  m.backends["gpu"] = gpu;
  const std::vector<ui::LessonMeasurement> ms = {m};
  auto value = [&](const std::string& expr) {
    std::string error;
    const ui::LessonClaim c = ui::parse_claim_expression(expr, error);
    REQUIRE(error.empty());
    return ui::evaluate_claim(c, ms);
  };
  CHECK(value("gpu.share(conv2d*) > 0.5").a == doctest::Approx(0.55));
  CHECK(value("gpu.share(conv2d*) > 0.5").outcome == "yes");
  CHECK(value("gpu.share(conv2d*|max_pool*) > 0.5").a == doctest::Approx(0.79));
  CHECK(value("gpu.intensity(conv2d*) > 1").a == doctest::Approx(20));   // 40 GFLOP/s over 2 GB/s
  CHECK(value("gpu.gflops(conv2d*) > 1").a == doctest::Approx(40));
  CHECK(value("gpu.bw(max_pool*) > 1").a == doctest::Approx(0.5));        // 5 of 10 GB/s
  // conv2d_forward: intensity 20, attainable min(100, 10 x 20) = 100: 40%; backward_data: min(100, 200) -> 20%.
  CHECK(value("gpu.roof(conv2d*) > 0.5").a == doctest::Approx(0.4));
  CHECK(value("gpu.roof(conv2d*) > 0.5").outcome == "no");
  CHECK(ui::claim_text({"{a} of the step", "only {a}", ""}, value("gpu.share(conv2d*) > 0.5")) == "55% of the step");
  CHECK(value("gpu.share(softmax*) > 0.5").why == "the GPU ran no kernel named softmax*");
  CHECK(value("cpu.share(conv*) > 0.5").why == "this session does not train on the CPU");
  CHECK(value("speedup > 1").why.find("no speedup was shown") == 0);
  m.backends["gpu"].kernels_current = false;
  std::string error;
  const ui::LessonClaim stale = ui::parse_claim_expression("gpu.share(conv*) > 0.5", error);
  CHECK(ui::evaluate_claim(stale, {m}).why.find("not of the settings in force") != std::string::npos);
}

TEST_CASE("the summary: every claim's figures as a table, written as CSV beside the slide's picture") {
  const fs::path out = fs::temp_directory_path() / ("trainscope_lesson_claims_" + std::to_string(std::random_device{}()));
  fs::create_directories(out);
  const std::string text = R"({"title": "t", "steps": [
      {"when": {"steady": {"steps": 2, "seconds": 0}}, "measure": "fp32"},
      {"claim": "cpu.samples_per_s > 1000", "caption": {"yes": "fast, \"{a}\"", "no": "slow, {a}"}},
      {"next": true, "summary": "today"}]})";
  const ui::Lesson lesson = ui::parse_lesson(text, "l.json");
  ui::check_lesson_output(lesson, out);
  ui::LessonRunner runner(lesson, ui::LessonOptions{true, out, {}});
  FakeHost host;
  core::TrainConfig cfg;
  core::BackendRun cpu = run_of("cpu", cfg, 5);
  cpu.recent_samples_per_s = 1500;
  for (int i = 0; i < 4; ++i) runner.update(i, view_of(cfg, {cpu}), host);
  CHECK(runner.summary_shown());
  REQUIRE(host.shots.size() == 1);
  CHECK(host.shots[0] == (out / "today.png").string());
  std::stringstream csv;
  csv << std::ifstream(out / "today.csv").rdbuf();  // closed at once: Windows cannot remove an open file (below)
  CHECK(csv.str() == std::string(ui::kLessonSummaryCsvHeader) +
                         ",text,measured_with\n"
                         "1,2,\"cpu.samples_per_s > 1000\",\"cpu.samples_per_s\",1500,\"\",1000,yes,\"fast, \"\"1.5k\"\"\","
                         "\"fp32, batch 128, MLP 784-256-128-10\"\n");
  // A file there that is not a summary table is never replaced.
  std::ofstream(out / "today.csv") << "my own notes\n";
  CHECK_THROWS_WITH_AS(ui::check_lesson_output(lesson, out), doctest::Contains("is not a lesson's summary table"),
                       core::Error);
  fs::remove_all(out);
}

TEST_CASE("going back shows an earlier caption over the view it was written for; coming forward, the current one") {
  const ui::Lesson lesson = ui::parse_lesson(R"({"title": "t", "window": {"tab": "memory"}, "steps": [
      {"caption": "one"},
      {"next": true, "view": {"tab": "kernels", "x_axis": "seconds"}, "caption": "two"},
      {"next": true, "view": {"tab": "roofline"}, "caption": "three"}]})",
                                             "l.json");
  ui::LessonRunner runner(lesson, ui::LessonOptions{false, {}, {}});
  FakeHost host;
  const ui::DashboardView view = view_of(core::TrainConfig{}, {});
  double t = 0;
  runner.update(t += 1, view, host);
  runner.next();
  runner.update(t += 1, view, host);
  runner.next();
  runner.update(t += 1, view, host);
  CHECK(runner.caption() == "three");
  runner.back();
  runner.update(t += 1, view, host);
  CHECK(runner.caption() == "two");
  CHECK(*host.views.back().tab == "kernels");
  runner.back();
  runner.update(t += 1, view, host);
  CHECK(runner.caption() == "one");
  CHECK(*host.views.back().tab == "memory");  // the lesson's window tab: what point 1 showed
  runner.next();
  runner.update(t += 1, view, host);
  CHECK(*host.views.back().tab == "kernels");
  CHECK(*host.views.back().x_seconds);
  runner.next();
  runner.update(t += 1, view, host);
  CHECK(runner.caption() == "three");
  CHECK(*host.views.back().tab == "roofline");
}

TEST_CASE("the outcome check flags captions that state what only a measurement can tell") {
  // Captions the shipped lessons had before their claims (issue 32): each stated a device-dependent outcome.
  for (const char* old : {"Here 16 bits are slower: this CPU and lavapipe have no 16-bit arithmetic, only conversions.",
                          "Batch 2048: on a real GPU the speedup keeps growing until its lanes are full.",
                          "Where the CNN's step goes: the three convolution kernels take most of it, on both backends.",
                          "The convolutions sit far right of the dense kernels: hundreds of FLOPs per byte, close to the "
                          "roof.",
                          "Batch 8: a dense layer has 8 rows of work here, a convolution still 8 x 784: the crossover "
                          "moves left.",
                          "Four loader threads: each batch is assembled in a quarter of the time."}) {
    CAPTURE(old);
    CHECK_FALSE(test::unconditional_outcome(old, true).empty());
  }
  CHECK(test::unconditional_outcome("Batch 512: 16 times the work per step for the GEMMs.", true).empty());
  CHECK(test::unconditional_outcome("On a real GPU the speedup keeps growing.", false).empty());  // notes: hedged
  CHECK_FALSE(test::unconditional_outcome("The GPU is faster here.", false).empty());
}

TEST_CASE("every shipped lesson states its device-dependent outcomes as claims, and ends with a summary") {
  int lessons = 0;
  for (const auto& entry : fs::directory_iterator(source_dir() / "assets" / "lessons")) {
    if (entry.path().extension() != ".json") continue;
    ++lessons;
    CAPTURE(entry.path().filename().string());
    std::ifstream in(entry.path());
    const nlohmann::json j = nlohmann::json::parse(in);
    const ui::Lesson lesson = ui::load_lesson(entry.path().string());  // valid, claims included
    int claims = 0, summaries = 0;
    CHECK(test::unconditional_outcome(j.value("description", ""), false) == "");
    for (const auto& step : j.at("steps")) {
      for (const char* key : {"caption", "notes"}) {
        if (!step.contains(key)) continue;
        if (step[key].is_string()) {
          CAPTURE(key);
          CHECK(test::unconditional_outcome(step[key].get<std::string>(), std::string(key) == "caption") == "");
        } else {  // a text per outcome: each caption carries a measured figure
          for (const auto& [outcome, text] : step[key].items())
            if (std::string(key) == "caption") CHECK(text.get<std::string>().find("{a") != std::string::npos);
        }
      }
      claims += step.contains("claim");
      summaries += step.contains("summary");
    }
    CHECK(claims >= 1);
    CHECK(summaries == 1);
  }
  CHECK(lessons == 8);
}

TEST_CASE("docs/lessons.md's lesson table lists exactly the lessons in assets/lessons") {
  std::set<std::string> shipped, listed;
  for (const auto& entry : fs::directory_iterator(source_dir() / "assets" / "lessons"))
    if (entry.path().extension() == ".json") shipped.insert(entry.path().filename().string());
  std::ifstream in(source_dir() / "docs" / "lessons.md");
  REQUIRE(in.good());
  bool in_lessons = false;  // the table of the page's first section, before its first "## " heading
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) in_lessons = line == "# Lessons";
    if (line.rfind("## ", 0) == 0) in_lessons = false;
    if (in_lessons && line.rfind("| `", 0) == 0) listed.insert(line.substr(3, line.find('`', 3) - 3));
  }
  CHECK(listed == shipped);
}
