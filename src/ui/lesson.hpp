// A lesson as a file: the steps a teacher takes in the dashboard, so that a lesson is given the same way every time
// (`trainscope dashboard --script lesson.json`): the teacher paces it with Space / Right / Page Down (what presentation
// clickers send; Left / Page Up shows the caption before), or `--autoplay` plays it unattended from start to end (CI,
// the README's pictures). The same scripts drive the dashboard's end-to-end tests: "expect" steps check what each
// backend's trainer really runs.
//
// The file is JSON:
//   {"title": "Batch size and the GPU's advantage",            (required)
//    "description": "...",                                      (optional, for the reader)
//    "settings": {"dataset": "fashion-mnist", "batch": 32, ...} (optional: the start, over the command line's; any
//                 key of the settings schema, core/settings_schema.hpp, but the machine's own set-up: data, device,
//                 backends, validation)
//    "window": {"size": "1280x720", "presentation": true, "font_size": 18, "tab": "kernels"}   (optional)
//    "steps": [ {step}, ... ]}                                  (at least one)
// A step runs when its trigger holds, then does its actions in this order: set, do, model, view, caption, notes,
// expect, screenshot, quit. Triggers (at most one; none: right after the previous step):
//   "next": true   the teacher's next (Space, Right, Page Down); with --autoplay at once. Each such step starts a point
//                  of the lesson: "3/9 · Space: next" on screen. A press while the lesson waits for something else is
//                  kept (one) for the next "next" step.
//   "at": S        seconds after the lesson started        "after": S   seconds after the previous step
//   "when": {...}  a condition, with "timeout": S (default 300; with --autoplay the lesson fails, exit 1, when it does
//                  not hold in time; a teacher's lesson waits on):
//       "gpu" / "cpu" / "both": {"step": N, "epoch": N, "steps_since_change": N, "paused": true|false,
//                                  "failed": true|false}
//                      N steps read back in all, N finished epochs, N steps since its last change of settings;
//                      failed: the backend stopped with an error (a lost GPU: "do": "reset" trains on a new one)
//       "applied": true            every backend's trainer runs the settings shown (nothing pending or being built)
//       "speedup": true|false      the GPU/CPU speedup is shown (both train the same settings) or not
//       "sweep_done": true         the sweep that "do": "sweep" started has ended (its points all measured)
//       "steady": true | {"steps": N, "seconds": S, "spread": X}   the figures are steady: every backend runs the
//                      settings shown, has trained N steps since its last change (default 20), and over the last S
//                      seconds (default 3) its samples/s and the speedup stayed within X (default 0.1: 10%) of their
//                      mean. A steady condition never fails a lesson: past its timeout (default 120 s) the lesson goes
//                      on and says how far the figures moved.
// Actions:
//   "set": {"batch": N, "lr": X, "optimizer": "sgd"|"adamw", "precision": "fp32"|"fp16"|"bf16", "threads": N,
//           "unfused": B, "sync_every_step": B, "submit_per_kernel": B,    (B: true | false, the teaching toggles)
//           "input": {"source": "device"|"host", "augment": B, "loader_threads": N, "prefetch": N, "pageable": B}}
//           (any live setting of the settings schema; the input pipeline as one object or flat ("input": "host",
//           "prefetch": 4): what it leaves out takes the command line's defaults, core/input.hpp)
//   "do": "pause" | "resume" | "single_step" | "reset" | "sweep"   (reset: with the settings shown; sweep: the Sweep
//         tab's Run sweep, training paused until it ends)
//   "model": {"dataset": ..., "model" (or "kind"): "mlp"|"cnn", "conv": [N, ...], "hidden": [N, ...] | "N,N",
//             "activation": "relu"|"gelu"|"silu", ...}   (resets training: the schema's settings that need new weights)
//   "view": {"tab": "controls"|"kernels"|"memory"|"bandwidth"|"sweep"|"boundary", "x_axis": "steps"|"seconds",
//            "plot": "loss"|"accuracy", "presentation": true|false, "font_size": 10..48,
//            "kernels": "bars"|"precisions"|"tables" (what the Kernels tab shows when not all of it fits)}
//   "caption": "text", "caption_seconds": S   shown large in the caption band above the plots (wrapped at word
//         boundaries, cut with an ellipsis where it does not fit), and in screenshots; until the next caption, or for
//         S seconds. Keep it to a sentence or two: the rest belongs in the notes.
//   "notes": "text"   speaker notes, printed to the terminal when the step runs ("lesson: notes 3/9: ...")
//   "expect": {"gpu"/"cpu"/"both": {"batch", "lr", "optimizer", "precision", "hidden", "activation"},
//              "applied": true, "figures": "current", "peaks": true}   checked from the trainers (BackendRun::running);
//              a failure ends the lesson with exit 1, saying what differs. "figures": "current": no timing, rate or
//              speedup mixes settings (each backend's kernel table holds only steps since its last change). "peaks":
//              every backend's device has its measured ceilings (no "no peak", no empty roof in the picture).
//   "screenshot": "name.png"   the next frame, with the caption and the footer burnt in (the next step waits for it),
//              as NAME.png in the lesson's output folder (--output, else the pictures folder; never the current
//              folder): a plain file name ending in .png, no folders, no "..", no control characters. An existing
//              file there is replaced only when it is a PNG (a regular file, not a link).
//   "quit": true | exit code   with --autoplay the lesson ends here; a teacher's lesson ends at the teacher's next
//   "measure": "NAME"   (a step whose "when" is steady) records the figures as they are when it holds, under NAME
//   "claim": "EXPR" | {"is": "EXPR", "within": X}   a comparison of measured figures (lesson_claim.hpp), e.g.
//              "cpu.samples_per_s@fp16 > cpu.samples_per_s@fp32"; its "caption" (and "notes") is then an object of a
//              text per outcome, {"yes": ..., "no": ...} (+ "even" with "within"), with {a}, {b}, {a/b}, {b/a} filled
//              in. Every label a claim names must be measured by an earlier step.
//   "summary": "NAME"   shows the slide "What we saw today": a table of every claim so far with its figures, and
//              writes it as NAME.png (the next frame) and NAME.csv into the output folder (a plain name, no extension)
// Every key is checked before the window opens: an unknown key, a wrong type or a value out of range is refused with
// the file, the step and the field named (exit 2), and so is a model or setting that training would refuse (a model
// beyond the memory cap, a learning rate that is 0 as a 32-bit float). New views and settings are new keys in the
// tables of lesson.cpp.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/dataset.hpp"
#include "core/settings_schema.hpp"
#include "core/metrics.hpp"
#include "run/command.hpp"
#include "ui/lesson_claim.hpp"

namespace ui {

// Settings a step compares with what a backend's trainer runs (every field optional).
struct LessonSettings {
  std::optional<int> batch;
  std::optional<float> lr;
  std::optional<core::Optimizer> optimizer;
  std::optional<core::Precision> precision;
  std::optional<std::vector<int>> hidden;
  std::optional<core::Activation> activation;
  std::optional<core::Execution> execution;  // the teaching toggles (from the settings shown; no "expect" key)
  std::optional<core::InputPipeline> input;  // the input pipeline (from the settings shown; no "expect" key)
};

struct LessonBackendCondition {
  std::optional<long long> step, epoch, steps_since_change;  // long long: long is 32 bits on Windows
  std::optional<bool> paused, failed;
};

// "steady": the figures stopped moving (see the top of this file).
struct LessonSteady {
  long steps = 20;       // steps since the last change, each backend
  double seconds = 3;    // how long the figures must stay within the spread
  double spread = 0.10;  // (max - min) / mean of each figure over those seconds
};

struct LessonCondition {
  std::map<std::string, LessonBackendCondition> backends;  // "gpu", "cpu", "both"
  std::optional<bool> applied;
  std::optional<bool> speedup;
  std::optional<bool> sweep_done;  // the sweep a "do": "sweep" started has ended (done, stopped or failed)
  std::optional<LessonSteady> steady;
};

struct LessonExpect {
  std::map<std::string, LessonSettings> backends;  // "gpu", "cpu", "both"
  bool applied = false;
  bool figures_current = false;
  bool peaks = false;  // every backend's device has measured peaks (a memory and a compute roof)
};

struct LessonView {
  std::optional<std::string> tab;        // a ui::tab_name
  std::optional<bool> x_seconds;         // x-axis in training seconds (else steps)
  std::optional<bool> accuracy;          // the accuracy plot when only one fits
  std::optional<bool> presentation;
  std::optional<float> font_size;
  std::optional<std::string> kernels;    // the Kernels tab's part when they do not all fit: bars, precisions, tables
};

// The dense hidden layers a backend runs: Running::hidden, or for a record that gives only the layer sizes (an MLP's
// dims), the sizes between the inputs and the classes.
inline std::vector<int> hidden_of(const core::BackendRun::Running& r) {
  if (!r.hidden.empty() || r.dims.size() < 2) return r.hidden;
  return std::vector<int>(r.dims.begin() + 1, r.dims.end() - 1);
}

struct LessonStep {
  int number = 0;  // from 1, as in messages
  bool next = false;  // waits for the teacher's next (see above)
  std::optional<double> at, after;
  std::optional<LessonCondition> when;
  double timeout = 300;  // a steady condition's: 120 unless given
  std::vector<run::Command> commands;  // "set" and "do" (not reset)
  bool reset = false;
  bool sweep = false;  // "do": "sweep": the Sweep tab's sweep (training pauses meanwhile)
  // "model": settings that start training again (core::SettingChange::Reset: dataset, model, conv, hidden, ...).
  std::optional<std::vector<core::SettingAssignment>> model;
  std::optional<LessonView> view;
  std::optional<std::string> caption;
  std::optional<double> caption_seconds;  // none: until the next caption
  std::optional<std::string> notes;
  std::optional<LessonExpect> expect;
  std::optional<std::string> screenshot;  // a file name (NAME.png) in the lesson's output folder
  std::optional<int> quit;
  // Claims (lesson_claim.hpp): a steady step's "measure" records the figures under a name; a "claim" step's caption
  // and notes are a text per outcome (caption_claim, notes_claim; a plain "notes" string stays in `notes`).
  std::optional<std::string> measure;
  std::optional<LessonClaim> claim;
  std::optional<ClaimTexts> caption_claim, notes_claim;
  // "summary": "NAME": the slide of what the lesson measured (every claim so far), as NAME.png and NAME.csv.
  std::optional<std::string> summary;
};

struct Lesson {
  std::string file;  // as given, for messages
  std::string title, description;
  // The start: the command line's settings with these over them (keys of the settings schema).
  std::vector<core::SettingAssignment> settings;
  // The window: over the command line's and the remembered settings.
  std::optional<std::string> size;  // "WxH"
  std::optional<bool> presentation;
  std::optional<float> font_size;
  std::optional<std::string> tab;
  std::vector<LessonStep> steps;

  // cfg with the lesson's "settings" over it.
  core::TrainConfig apply(core::TrainConfig cfg) const;
  // The lesson's points: 1 + its "next" steps ("3/9" on screen).
  int points() const;
};

// Parses and checks `text` (the contents of `file`). Throws core::Error(InvalidArgument) with one line naming the
// file, the step and the field, e.g. `lesson.json: step 3: "batch": must be an integer 1..65536, not "big"`.
// Screenshot names are checked as names (lesson_screenshot_name); where they go is checked by check_lesson_output.
Lesson parse_lesson(const std::string& text, const std::string& file);

// Reads `path` (core::read_regular_file: a regular file of at most 1 MiB) and parses it. Throws
// core::Error(InvalidArgument) as parse_lesson, also for a file that cannot be read ("--script: lesson file ...").
Lesson load_lesson(const std::string& path);

// Checks that need the start's settings and the dataset, run through the lesson step by step: every configuration a
// step makes (`start` with the lesson's "set" and "model" steps applied in order) must pass core::validate and
// run::validate_for_backends (the batch at most the training set; the model within the memory cap and, training on
// the GPU, within the device's limits: gpu::device_fit_problem), with `data`'s
// shape for its dataset and the known shapes of the others (fashion-mnist 784 -> 10, spiral 2 -> spiral_classes).
// Throws as parse_lesson, naming the step and its field. Defined in lesson_check.cpp.
void check_lesson_settings(const Lesson& lesson, const core::TrainConfig& start, const core::DataSplit& data);

// "" when `name` may name a lesson's screenshot: a plain file name (no folder, "." or "..") ending in ".png", of
// printable characters (no NUL, no control character), at most 255 bytes; else why not.
std::string lesson_screenshot_name_problem(const std::string& name);

// The folder a lesson's screenshots go to without --output: the user's pictures folder (XDG_PICTURES_DIR, from the
// environment or $XDG_CONFIG_HOME/user-dirs.dirs, else $HOME/Pictures) / trainscope / the lesson file's stem.
// Throws core::Error(InvalidArgument) when there is no HOME to find it from ("give --output DIR").
std::filesystem::path default_lesson_output(const std::string& lesson_file);

// Makes `folder` (and its parents) if missing and checks that every screenshot of `lesson` can be written there
// (core::check_output_path; an existing file that is not a PNG, or a link, is refused). Throws
// core::Error(InvalidArgument) "--output DIR: ..." or naming the step.
void check_lesson_output(const Lesson& lesson, const std::filesystem::path& folder);

// "" when a lesson may write its screenshot to `path` now: nothing there, or a regular file (not a link) that starts
// with the PNG signature; else why not ("... exists and is not a PNG: trainscope replaces only its own pictures").
std::string lesson_screenshot_target_problem(const std::filesystem::path& path);

// The first line of a lesson's summary table (NAME.csv): what lesson_summary_csv_problem recognises as its own.
inline constexpr const char* kLessonSummaryCsvHeader = "point,step,claim,first,first_value,second,second_value,outcome";
// "" when a lesson may write its summary table to `path`: nothing there, or a regular file starting with that header.
std::string lesson_summary_csv_problem(const std::filesystem::path& path);

}  // namespace ui
