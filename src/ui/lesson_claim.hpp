// A lesson's claims: a caption stated as a comparison of figures measured in this lesson, with one text for each
// outcome, so that a caption never says what the screen contradicts (on this machine, under this load, on a real GPU).
//
// A step with {"when": {"steady": true}, "measure": "fp16"} records the figures once they are steady (lesson_runner);
// a later step states
//   "claim": "cpu.samples_per_s@fp16 > cpu.samples_per_s@fp32"          (or {"is": "...", "within": 0.05})
//   "caption": {"yes": "16 bits are {a/b}x faster ({a} vs {b} samples/s)", "no": "... slower ...", "even": "..."}
//   "notes": {"yes": ..., "no": ..., "even": ...}   (or one plain text)
// and the text of the outcome measured is shown, its {placeholders} filled in.
//
// The expression is FIGURE OP FIGURE or FIGURE OP NUMBER, OP one of > and <. A FIGURE is
//   speedup[@LABEL]                     the GPU/CPU speedup shown (core::live_speedup)
//   gpu|cpu.samples_per_s[@LABEL]       the backend's samples/s over its last seconds
//   gpu|cpu.busy[@LABEL]                its busy share: kernel time / wall time over the last steps (0..1)
//   gpu|cpu.share(PATTERN)[@LABEL]      the share of its step time in kernels named PATTERN (`*`: any characters, `|`
//                                       between alternatives), e.g. share(conv2d*), share(act_*|bias_*); 0..1
//   gpu|cpu.intensity(PATTERN)[@LABEL]  the highest arithmetic intensity (FLOP per byte) of those kernels
//   gpu|cpu.gflops(PATTERN)[@LABEL]     the highest GFLOP/s of those kernels
//   gpu|cpu.bw(PATTERN)[@LABEL]         the highest share of the measured memory ceiling (GB/s / ceiling) of those
//                                       kernels; 0..1, above 1 when their bytes came from the caches
//   gpu|cpu.roof(PATTERN)[@LABEL]       the highest share of its roof (GFLOP/s / the roofline's attainable GFLOP/s at
//                                       its intensity, with the device's measured peaks) of those kernels; 0..1
// @LABEL picks the measurement a "measure" step of that name took (the latest, if several did); without it, the
// latest measurement of any name. Outcomes: "yes" (the comparison holds), "no", and with "within": X, "even" when the
// two figures differ by at most X of the larger (|a - b| <= X max(|a|, |b|)), checked first.
// Placeholders: {a} {b} the two figures (samples/s as 16.0k, speedup as 0.107x, shares as 45%, intensity and
// GFLOP/s as 93),
// {a/b} {b/a} their ratio (2 significant digits), {{ and }} for braces.
// A figure that was not measured (no speedup shown, no such kernel, no peaks) or a measurement whose figures did not
// settle shows "Not measured here: <why>." instead of any outcome: a lesson never guesses.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/peaks.hpp"

namespace ui {

struct ClaimFigure {
  enum class Kind { Speedup, SamplesPerS, Busy, Share, Intensity, Gflops, Bandwidth, Roof };
  Kind kind = Kind::Speedup;
  std::string backend;  // "gpu" | "cpu"; empty for the speedup
  std::string pattern;  // share, intensity, roof: the kernel names
  std::string label;    // the measurement; empty: the latest
  std::string text;     // as written, for messages and the summary ("cpu.samples_per_s@fp16")
};

struct LessonClaim {
  std::string text;  // the expression as written
  ClaimFigure a;
  char op = '>';  // '>' | '<'
  std::optional<ClaimFigure> b;  // none: the number
  double number = 0;
  std::optional<double> within;  // "even" when the figures are this close (relative)
};

// A text per outcome (caption or notes of a claim step).
struct ClaimTexts {
  std::string yes, no, even;
};

// One backend's figures at a measurement.
struct MeasuredBackend {
  double samples_per_s = 0;
  double busy = -1;  // -1: not known
  bool kernels_current = false;  // its kernel table holds only steps of the settings in force
  std::vector<core::KernelRow> kernels;
  core::RoofCeilings roof;
};

// The figures a "measure" step took.
struct LessonMeasurement {
  std::string label;
  int step = 0, point = 0;
  bool settled = true;
  std::string unsettled;  // why not: how far the figures moved
  double speedup = 0;     // 0: none shown
  std::string settings;   // what ran, in words ("batch 512, fp16, MLP 784-256-128-10"), for the summary
  std::map<std::string, MeasuredBackend> backends;
};

// The outcome of a claim over the measurements so far.
struct ClaimResult {
  std::string outcome;  // "yes" | "no" | "even"; "" when not measured
  std::string why;      // not measured: why
  double a = 0, b = 0;
  std::string a_text, b_text;  // formatted as the placeholders show them
  std::string settings;        // the measurement(s) the figures came from, in words
};

// One row of a lesson's summary ("What we saw today"): a claim as it was judged.
struct LessonSummaryRow {
  int point = 0, step = 0;
  std::string claim;                 // the expression
  std::string first, second;         // the figures' names as written ("" second: a number)
  double first_value = 0, second_value = 0;
  std::string first_text, second_text;  // as the caption showed them
  std::string outcome;               // yes | no | even | "not measured"
  std::string text;                  // the caption shown
  std::string settings;              // what ran when the figures were measured
};

// The summary as CSV (a header, then one row per claim; RFC 4180 quoting).
std::string lesson_summary_csv(const std::vector<LessonSummaryRow>& rows);

// Parses an expression (see above). Throws core::Error(InvalidArgument) via `fail(what)`-style messages: the caller
// gives the file, step and field; the message says what was expected where, e.g.
// `cannot read "gpu.speed > 1": "speed" is no figure (samples_per_s, busy, share(...), intensity(...), roof(...))`.
LessonClaim parse_claim_expression(const std::string& text, std::string& error);

// "" when every {placeholder} of `text` is known; else what is wrong.
std::string claim_text_problem(const std::string& text);

// The claim's outcome from `measurements` (in the order they were taken).
ClaimResult evaluate_claim(const LessonClaim& claim, const std::vector<LessonMeasurement>& measurements);

// `texts`' text for `result`'s outcome with the placeholders filled in; "Not measured here: ..." when not measured.
std::string claim_text(const ClaimTexts& texts, const ClaimResult& result);

// A figure as the placeholders show it: a speedup as the race header shows it (speedup_figure: "12x", "2.50x",
// "0.042x", "<0.001x"), samples/s "9.4k", shares and roofs in percent, GFLOP/s and intensities without decimals
// from 10.
std::string format_figure(ClaimFigure::Kind kind, double value);

// Whether a kernel's name matches a pattern with `*` wildcards and `|` between alternatives.
bool kernel_name_matches(const std::string& pattern, const std::string& name);

}  // namespace ui
