// A lesson's claims (lesson_claim.hpp): the small expression language, the figures it reads from a measurement, the
// outcome and the text shown for it.
#include "ui/lesson_claim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "ui/figure_text.hpp"
#include "ui/lesson.hpp"

namespace ui {
namespace {

using Kind = ClaimFigure::Kind;

// A cursor over the expression; every method skips spaces first.
struct Reader {
  const std::string& s;
  size_t at = 0;
  void spaces() {
    while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
  }
  bool done() {
    spaces();
    return at >= s.size();
  }
  bool take(char c) {
    spaces();
    if (at < s.size() && s[at] == c) return ++at, true;
    return false;
  }
  // A run of characters for which `ok` holds.
  template <class F>
  std::string word(F ok) {
    spaces();
    const size_t begin = at;
    while (at < s.size() && ok(s[at])) ++at;
    return s.substr(begin, at - begin);
  }
};

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
bool pattern_char(char c) { return name_char(c) || c == '*' || c == '|'; }

std::optional<ClaimFigure> figure(Reader& r, std::string& error) {
  const size_t begin = (r.spaces(), r.at);
  ClaimFigure f;
  const std::string first = r.word([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (first.empty()) {
    error = "expected a figure (speedup, gpu.samples_per_s, cpu.share(conv*), ...)";
    return std::nullopt;
  }
  if (first == "speedup") {
    f.kind = Kind::Speedup;
  } else if (first == "gpu" || first == "cpu") {
    f.backend = first;
    if (!r.take('.')) {
      error = fmt::format("expected a '.' and a figure after \"{}\" (e.g. {}.samples_per_s)", first, first);
      return std::nullopt;
    }
    const std::string name = r.word([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    const std::map<std::string, Kind> names = {{"samples_per_s", Kind::SamplesPerS}, {"busy", Kind::Busy},
                                               {"share", Kind::Share},              {"intensity", Kind::Intensity},
                                               {"gflops", Kind::Gflops},            {"bw", Kind::Bandwidth},
                                               {"roof", Kind::Roof}};
    const auto it = names.find(name);
    if (it == names.end()) {
      error = fmt::format("\"{}\" is no figure of a backend (samples_per_s, busy, share(...), intensity(...), "
                          "gflops(...), bw(...), roof(...))",
                          name);
      return std::nullopt;
    }
    f.kind = it->second;
    const bool kernels = f.kind != Kind::SamplesPerS && f.kind != Kind::Busy;
    if (kernels) {
      if (!r.take('(')) {
        error = fmt::format("{} needs the kernels it is about in parentheses, e.g. {}.{}(conv2d*)", name, first, name);
        return std::nullopt;
      }
      f.pattern = r.word(pattern_char);
      if (f.pattern.empty() || !r.take(')')) {
        error = fmt::format("{}(...) takes one kernel name with * wildcards and a ')', e.g. {}(matmul*)", name, name);
        return std::nullopt;
      }
    }
  } else {
    error = fmt::format("\"{}\" is no figure: a figure is speedup, or gpu. or cpu. and a figure of that backend", first);
    return std::nullopt;
  }
  size_t end = r.at;  // before the spaces that take() skips
  if (r.take('@')) {
    f.label = r.word(name_char);
    if (f.label.empty()) {
      error = "expected a measurement's name after '@' (a \"measure\" step's name)";
      return std::nullopt;
    }
    end = r.at;
  }
  f.text = r.s.substr(begin, end - begin);
  return f;
}

// What a figure was measured at: the measurement it names, or the latest one.
const LessonMeasurement* measurement_of(const ClaimFigure& f, const std::vector<LessonMeasurement>& ms) {
  for (auto it = ms.rbegin(); it != ms.rend(); ++it)
    if (f.label.empty() || it->label == f.label) return &*it;
  return nullptr;
}

// The figure's value, or why it has none.
std::optional<double> value_of(const ClaimFigure& f, const std::vector<LessonMeasurement>& ms, std::string& why,
                               std::string& settings) {
  const LessonMeasurement* m = measurement_of(f, ms);
  if (!m) {
    why = fmt::format("no measurement {}was taken before this point", f.label.empty() ? "" : "\"" + f.label + "\" ");
    return std::nullopt;
  }
  if (!m->settled) {
    why = fmt::format("the figures{} did not settle ({})", f.label.empty() ? "" : " of \"" + f.label + "\"",
                      m->unsettled);
    return std::nullopt;
  }
  if (settings.find(m->settings) == std::string::npos)
    settings += (settings.empty() ? "" : "; ") + m->settings;
  if (f.kind == Kind::Speedup) {
    if (m->speedup > 0) return m->speedup;
    why = "no speedup was shown (the backends did not both train the same settings)";
    return std::nullopt;
  }
  const auto b = m->backends.find(f.backend);
  if (b == m->backends.end()) {
    why = fmt::format("this session does not train on the {}", f.backend == "gpu" ? "GPU" : "CPU");
    return std::nullopt;
  }
  const MeasuredBackend& run = b->second;
  const std::string who = f.backend == "gpu" ? "the GPU" : "the CPU";
  if (f.kind == Kind::SamplesPerS) {
    if (run.samples_per_s > 0) return run.samples_per_s;
    why = who + " had no samples/s yet";
    return std::nullopt;
  }
  if (f.kind == Kind::Busy) {
    if (run.busy >= 0) return run.busy;
    why = who + "'s busy share was not measured";
    return std::nullopt;
  }
  // The kernel figures: only from a table that holds the settings in force alone.
  if (!run.kernels_current || run.kernels.empty()) {
    why = who + "'s kernel timings were not of the settings in force yet";
    return std::nullopt;
  }
  double total = 0, best = 0;
  bool any = false;
  for (const core::KernelRow& k : run.kernels) {
    if (!kernel_name_matches(f.pattern, k.name)) continue;
    any = true;
    const double intensity = k.gbps > 0 ? k.gflops / k.gbps : 0;  // FLOP per byte: both from the same time
    if (f.kind == Kind::Share) total += k.pct_of_step / 100;
    if (f.kind == Kind::Intensity) best = std::max(best, intensity);
    if (f.kind == Kind::Gflops) best = std::max(best, k.gflops);
    if (f.kind == Kind::Bandwidth) {
      if (run.roof.bandwidth_gbps <= 0) {
        why = who + "'s device has no measured memory ceiling";
        return std::nullopt;
      }
      best = std::max(best, k.gbps / run.roof.bandwidth_gbps);
    }
    if (f.kind == Kind::Roof) {
      const double attainable = std::min(run.roof.compute_gflops, run.roof.bandwidth_gbps * intensity);
      if (run.roof.compute_gflops <= 0 || run.roof.bandwidth_gbps <= 0) {
        why = who + "'s device has no measured peaks";
        return std::nullopt;
      }
      if (attainable > 0) best = std::max(best, k.gflops / attainable);
    }
  }
  if (!any) {
    why = fmt::format("{} ran no kernel named {}", who, f.pattern);
    return std::nullopt;
  }
  return f.kind == Kind::Share ? total : best;
}

std::string ratio(double x, double y) {
  if (y == 0) return "-";
  return fmt::format("{:.2g}", x / y);
}

}  // namespace

bool kernel_name_matches(const std::string& patterns, const std::string& name) {
  if (const size_t bar = patterns.find('|'); bar != std::string::npos)
    return kernel_name_matches(patterns.substr(0, bar), name) || kernel_name_matches(patterns.substr(bar + 1), name);
  const std::string& pattern = patterns;
  // Glob with '*' only: match the pieces between stars in order, the first at the start and the last at the end.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string::npos) {
      p = star + 1, n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

LessonClaim parse_claim_expression(const std::string& text, std::string& error) {
  LessonClaim c;
  c.text = text;
  Reader r{text};
  auto a = figure(r, error);
  if (!a) return c;
  c.a = *a;
  if (r.take('>'))
    c.op = '>';
  else if (r.take('<'))
    c.op = '<';
  else {
    error = fmt::format("expected > or < after {} (a claim is FIGURE > FIGURE, or FIGURE < NUMBER)", c.a.text);
    return c;
  }
  r.spaces();
  if (r.at < text.size() && (std::isdigit(static_cast<unsigned char>(text[r.at])) || text[r.at] == '.')) {
    const std::string num = r.word([](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.'; });
    char* end = nullptr;
    c.number = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size() || !std::isfinite(c.number)) {
      error = fmt::format("\"{}\" is not a number", num);
      return c;
    }
  } else {
    auto b = figure(r, error);
    if (!b) return c;
    c.b = *b;
  }
  if (!r.done()) error = fmt::format("unexpected \"{}\" after the comparison (a claim compares two things)", text.substr(r.at));
  return c;
}

std::string claim_text_problem(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        ++i;
        continue;
      }
      return "has a '}' without its '{' (write }} for a brace)";
    }
    if (text[i] != '{') continue;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) return "has a '{' without its '}' (write {{ for a brace)";
    const std::string name = text.substr(i + 1, close - i - 1);
    if (name != "a" && name != "b" && name != "a/b" && name != "b/a")
      return fmt::format("has {{{}}}: the placeholders are {{a}}, {{b}}, {{a/b}} and {{b/a}}", name);
    i = close;
  }
  return "";
}

std::string format_figure(Kind kind, double v) {
  switch (kind) {
    case Kind::Speedup: return speedup_figure(v);  // as the race header shows it
    case Kind::SamplesPerS:
      return v >= 1e6 ? fmt::format("{:.2f}M", v / 1e6) : v >= 1e3 ? fmt::format("{:.1f}k", v / 1e3) : fmt::format("{:.0f}", v);
    case Kind::Busy:
    case Kind::Share:
    case Kind::Bandwidth:
    case Kind::Roof: return fmt::format("{:.0f}%", 100 * v);
    case Kind::Gflops:
    case Kind::Intensity: return v >= 10 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
  }
  return fmt::format("{:g}", v);
}

ClaimResult evaluate_claim(const LessonClaim& claim, const std::vector<LessonMeasurement>& ms) {
  ClaimResult r;
  const std::optional<double> a = value_of(claim.a, ms, r.why, r.settings);
  if (!a) return r;
  std::optional<double> b = claim.number;
  if (claim.b) b = value_of(*claim.b, ms, r.why, r.settings);
  if (!b) return r;
  r.a = *a, r.b = *b;
  r.a_text = format_figure(claim.a.kind, r.a);
  r.b_text = format_figure(claim.b ? claim.b->kind : claim.a.kind, r.b);
  if (claim.within && std::abs(r.a - r.b) <= *claim.within * std::max(std::abs(r.a), std::abs(r.b)))
    r.outcome = "even";
  else
    r.outcome = (claim.op == '>' ? r.a > r.b : r.a < r.b) ? "yes" : "no";
  return r;
}

std::string claim_text(const ClaimTexts& texts, const ClaimResult& r) {
  if (r.outcome.empty()) return "Not measured here: " + r.why + ".";
  const std::string& t = r.outcome == "yes" ? texts.yes : r.outcome == "no" ? texts.no : texts.even;
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if ((t[i] == '{' || t[i] == '}') && i + 1 < t.size() && t[i + 1] == t[i]) {
      out += t[i++];
      continue;
    }
    if (t[i] != '{') {
      out += t[i];
      continue;
    }
    const size_t close = t.find('}', i);
    const std::string name = t.substr(i + 1, close - i - 1);
    out += name == "a" ? r.a_text : name == "b" ? r.b_text : name == "a/b" ? ratio(r.a, r.b) : ratio(r.b, r.a);
    i = close;
  }
  return out;
}

std::string lesson_summary_csv(const std::vector<LessonSummaryRow>& rows) {
  auto quoted = [](const std::string& v) {
    std::string out = "\"";
    for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string csv = std::string(kLessonSummaryCsvHeader) + ",text,measured_with\n";
  for (const LessonSummaryRow& r : rows)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", r.point, r.step, quoted(r.claim), quoted(r.first),
                       r.outcome == "not measured" ? "" : fmt::format("{:.6g}", r.first_value), quoted(r.second),
                       r.outcome == "not measured" ? "" : fmt::format("{:.6g}", r.second_value), r.outcome,
                       quoted(r.text), quoted(r.settings));
  return csv;
}

}  // namespace ui
