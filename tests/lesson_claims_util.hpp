// Shared by the lesson tests that play lessons (test_app_dashboard, test_app_lesson_plays) and the one that reads the
// shipped ones (test_app_lesson_claims): the check that every claim a played lesson showed agrees with the figures it
// was computed from, read back from the lesson's log, and the check that no plain text of a lesson states a
// device-dependent outcome (a caption that must be a claim).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace test {

// A figure as a caption shows it ("16.0k", "45%", "0.107x", "93", "1.2M") back as a number (45% -> 0.45).
// Half a unit of the last digit `s` shows, in the figure's units: how far the rounded figure may be from the exact one
// ("16.0k": 50, "45%": 0.005, "1.3": 0.05, "93": 0.5).
inline double figure_rounding(std::string s) {
  double scale = 1;
  if (!s.empty() && s.back() == 'x') s.pop_back();
  if (!s.empty() && s.back() == '%') s.pop_back(), scale = 0.01;
  if (!s.empty() && s.back() == 'k') s.pop_back(), scale = 1e3;
  if (!s.empty() && s.back() == 'M') s.pop_back(), scale = 1e6;
  const size_t dot = s.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
  return 0.5 * std::pow(10.0, -decimals) * scale * 1.001;  // 1.001: the binary value of a decimal half-way figure
}

inline double figure_value(std::string s) {
  double scale = 1;
  if (!s.empty() && s.back() == 'x') s.pop_back();
  if (!s.empty() && s.back() == '%') s.pop_back(), scale = 0.01;
  if (!s.empty() && s.back() == 'k') s.pop_back(), scale = 1e3;
  if (!s.empty() && s.back() == 'M') s.pop_back(), scale = 1e6;
  return std::stod(s) * scale;
}

inline std::string regex_escape(const std::string& s) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// The figures each measurement of the log took: label -> {"cpu": samples/s, "gpu": ..., "speedup": ...} (the latest).
inline std::map<std::string, std::map<std::string, double>> measured_figures(const std::string& log, size_t upto) {
  std::map<std::string, std::map<std::string, double>> out;
  static const std::regex line(R"re(lesson: step \d+: measured "([^"]+)"[^:]*(?:\([^)]*\))?: (.*))re");
  static const std::regex figure(R"re((cpu|gpu) (\d+) samples/s)re");
  static const std::regex speedup(R"re(speedup ([0-9.]+)x)re");
  std::istringstream in(log.substr(0, upto));
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    auto& f = out[m[1]];
    f.clear();
    const std::string rest = m[2];
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), figure); it != std::sregex_iterator(); ++it)
      f[(*it)[1]] = std::stod((*it)[2]);
    if (std::smatch s; std::regex_search(rest, s, speedup)) f["speedup"] = std::stod(s[1]);
  }
  return out;
}

struct ClaimCheck {
  int shown = 0;         // claims judged on figures
  int not_measured = 0;  // claims that said "Not measured here"
};

// Checks every "lesson: claim" line of `log`, the output of playing `lesson` (the file played: its step numbers):
//  - the outcome is the one the logged figures give (a > b or a < b; "even" when within the claim's margin);
//  - the caption is the lesson's text for that outcome, and the figures filled into it are the logged ones;
//  - a samples/s or speedup figure is the one the named measurement took ("lesson: step N: measured ...").
inline ClaimCheck check_claims(const std::string& log, const nlohmann::json& lesson) {
  ClaimCheck result;
  static const std::regex head(R"re(lesson: claim \d+/\d+ \(step (\d+)\): (.*))re");
  static const std::regex judged(
      R"re((\S+) = (\S+) ([<>]) (\S+) = (\S+)(?: \(even within ([0-9.e-]+)\))?: (yes|no|even); caption: (.*))re");
  static const std::regex not_measured(R"re((.*): not measured \((.*)\); caption: (.*))re");
  size_t at = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line); at += line.size() + 1) {
    std::smatch h;
    if (!std::regex_match(line, h, head)) continue;
    CAPTURE(line);
    const int step = std::stoi(h[1]);
    REQUIRE(step >= 1);
    REQUIRE(static_cast<size_t>(step) <= lesson.at("steps").size());
    const nlohmann::json& s = lesson["steps"][static_cast<size_t>(step - 1)];
    REQUIRE(s.contains("claim"));
    const std::string rest = h[2];
    std::smatch m;
    if (std::regex_match(rest, m, not_measured)) {
      ++result.not_measured;
      CHECK(m[3].str().rfind("Not measured here: ", 0) == 0);
      continue;
    }
    REQUIRE(std::regex_match(rest, m, judged));
    ++result.shown;
    const double a = std::stod(m[2]), b = std::stod(m[5]);
    const char op = m[3].str()[0];
    const std::string outcome = m[7], caption = m[8];
    std::string expected = (op == '>' ? a > b : a < b) ? "yes" : "no";
    if (m[6].matched && std::abs(a - b) <= std::stod(m[6]) * std::max(std::abs(a), std::abs(b))) expected = "even";
    CHECK(outcome == expected);
    // The caption: the lesson's text for this outcome, its placeholders matching the logged figures.
    const std::string text = s.at("caption").at(outcome).get<std::string>();
    std::string pattern;
    std::vector<std::string> holes;
    for (size_t i = 0; i < text.size(); ++i) {
      if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) {
        pattern += regex_escape(std::string(1, text[i++]));
      } else if (text[i] == '{') {
        const size_t close = text.find('}', i);
        holes.push_back(text.substr(i + 1, close - i - 1));
        pattern += "(.+?)";
        i = close;
      } else {
        pattern += regex_escape(std::string(1, text[i]));
      }
    }
    std::smatch c;
    REQUIRE_MESSAGE(std::regex_match(caption, c, std::regex(pattern)), "the caption is not the lesson's \"" << outcome
                                                                                                         << "\" text");
    for (size_t i = 0; i < holes.size(); ++i) {
      const double shown = figure_value(c[i + 1]);
      const double want = holes[i] == "a" ? a : holes[i] == "b" ? b : holes[i] == "a/b" ? a / b : b / a;
      CAPTURE(holes[i]);
      CAPTURE(c[i + 1].str());
      // The shown figure is the logged one as rounded for the caption; the log has 6 significant digits.
      CHECK(std::abs(shown - want) <= figure_rounding(c[i + 1]) + 1e-5 * std::abs(want));
    }
    // A samples/s or speedup figure is the one its measurement took.
    const auto measured = measured_figures(log, at);
    static const std::regex named(R"re((?:(cpu|gpu)\.samples_per_s|(speedup))@(\S+))re");
    for (const auto& [name, value] : {std::pair{m[1].str(), a}, std::pair{m[4].str(), b}}) {
      std::smatch f;
      if (!std::regex_match(name, f, named)) continue;
      const std::string key = f[1].matched ? f[1].str() : "speedup";
      CAPTURE(name);
      REQUIRE(measured.count(f[3]));
      REQUIRE(measured.at(f[3]).count(key));
      const double logged = measured.at(f[3]).at(key);
      // samples/s logged as integers, the speedup to 3 decimals
      CHECK(std::abs(logged - value) <= (key == "speedup" ? 0.00051 : std::max(0.51, 0.001 * std::abs(value))));
    }
  }
  return result;
}

// The first sentence of `text` that states an outcome only a measurement can tell (faster, slower, most of the step,
// close to the roof, ...), or "" when none does. A question states nothing. `strict`: a caption, shown above the
// figures (no hedge excuses it: "on a real GPU the speedup keeps growing" above a speedup that does not is what
// issue 32 found); otherwise (notes, descriptions) a sentence about what a real GPU or a hypothetical device does is
// fine.
inline std::string unconditional_outcome(const std::string& text, bool strict) {
  static const std::vector<std::string> outcome = {
      "are faster", "is faster", "x faster", "faster than", "runs faster", "are slower", "is slower", "x slower",
      "slower than", "runs slower", " wins", "win here", "cannot win", "beats", "overtakes", "keeps growing",
      "speedup grows", "speedup grew", "share grows", "share grew", "climb", "most of it", "most of the step",
      "closest", "close to the roof", "moves left", "starves", "keeps up", "bigger share", "quarter of the time",
      "speeds up", "x as fast", "idles", "no crossover"};
  static const std::vector<std::string> hedges = {"real gpu", "would", "could", " can ", "if ", "where ", "may ",
                                                  "usually", "a gpu with", "expected", "when ", "whether"};
  std::string sentence;
  auto judge = [&](const std::string& s) {
    std::string lower = s;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const bool states = std::any_of(outcome.begin(), outcome.end(),
                                    [&](const std::string& w) { return lower.find(w) != std::string::npos; });
    const bool hedged = std::any_of(hedges.begin(), hedges.end(),
                                    [&](const std::string& w) { return lower.find(w) != std::string::npos; });
    const bool question = lower.find('?') != std::string::npos;  // asks the class: states nothing
    return states && !question && (strict || !hedged);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    sentence += text[i];
    const bool end = text[i] == '.' && (i + 1 == text.size() || text[i + 1] == ' ');
    if (end || i + 1 == text.size()) {
      if (judge(sentence)) return sentence;
      sentence.clear();
    }
  }
  return "";
}

}  // namespace test
