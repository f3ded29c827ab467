// A lesson as a file: the steps a teacher takes in the dashboard, timed, so that a lesson runs unattended from start to
// end (`trainscope dashboard --script lesson.json`) and makes the same pictures every time. The same scripts drive the
// dashboard's end-to-end tests: "expect" steps check what each backend's trainer really runs.
//
// The file is JSON:
//   {"title": "Batch size and the GPU's advantage",            (required)
//    "description": "...",                                      (optional, for the reader)
//    "settings": {"dataset": "fashion-mnist", "batch": 32, ...} (optional: the start, over the command line's)
//    "window": {"size": "1280x720", "presentation": true, "font_size": 18, "tab": "kernels"}   (optional)
//    "steps": [ {step}, ... ]}                                  (at least one)
// A step runs when its trigger holds, then does its actions in this order: set, do, model, view, caption, expect,
// screenshot, quit. Triggers (at most one; none: right after the previous step):
//   "at": S        seconds after the lesson started        "after": S   seconds after the previous step
//   "when": {...}  a condition, with "timeout": S (default 300; the lesson fails, exit 1, when it does not hold in time):
//       "gpu" / "cpu" / "both": {"step": N, "epoch": N, "steps_since_change": N, "paused": true|false}
//                      N steps read back in all, N finished epochs, N steps since its last change of settings
//       "applied": true            every backend's trainer runs the settings shown (nothing pending or being built)
//       "speedup": true|false      the GPU/CPU speedup is shown (both train the same settings) or not
//       "sweep_done": true         the sweep that "do": "sweep" started has ended (its points all measured)
// Actions:
//   "set": {"batch": N, "lr": X, "optimizer": "sgd"|"adamw", "precision": "fp32"|"fp16"|"bf16", "threads": N,
//           "unfused": B, "sync_every_step": B, "submit_per_kernel": B}    (B: true | false, the teaching toggles)
//   "do": "pause" | "resume" | "single_step" | "reset" | "sweep"   (reset: with the settings shown; sweep: the Sweep
//         tab's Run sweep, training paused until it ends)
//   "model": {"dataset": ..., "hidden": [N, ...] | "N,N", "activation": "relu"|"gelu"}   (resets training)
//   "view": {"tab": "controls"|"kernels"|"memory"|"bandwidth"|"sweep"|"boundary", "x_axis": "steps"|"seconds",
//            "plot": "loss"|"accuracy", "presentation": true|false, "font_size": 10..48,
//            "kernels": "bars"|"precisions"|"tables" (what the Kernels tab shows when not all of it fits)}
//   "caption": "text", "caption_seconds": S (default 8)   shown large over the plots, and in screenshots
//   "expect": {"gpu"/"cpu"/"both": {"batch", "lr", "optimizer", "precision", "hidden", "activation"},
//              "applied": true, "figures": "current"}   checked from the trainers (BackendRun::running); a failure
//              ends the lesson with exit 1, saying what differs. "figures": "current": no timing, rate or speedup
//              mixes settings (each backend's kernel table holds only steps since its last change).
//   "screenshot": "path.png"   the next frame, with the caption and the footer burnt in (the next step waits for it)
//   "quit": true | exit code
// Every key is checked before the window opens: an unknown key, a wrong type or a value out of range is refused with
// the file, the step and the field named (exit 2). New views and settings (issue 11's toggles, the sweep and the
// decision boundary) are new keys in the tables of lesson.cpp.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "run/command.hpp"

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
};

struct LessonBackendCondition {
  std::optional<long> step, epoch, steps_since_change;
  std::optional<bool> paused;
};

struct LessonCondition {
  std::map<std::string, LessonBackendCondition> backends;  // "gpu", "cpu", "both"
  std::optional<bool> applied;
  std::optional<bool> speedup;
  std::optional<bool> sweep_done;  // the sweep a "do": "sweep" started has ended (done, stopped or failed)
};

struct LessonExpect {
  std::map<std::string, LessonSettings> backends;  // "gpu", "cpu", "both"
  bool applied = false;
  bool figures_current = false;
};

struct LessonView {
  std::optional<std::string> tab;        // a ui::tab_name
  std::optional<bool> x_seconds;         // x-axis in training seconds (else steps)
  std::optional<bool> accuracy;          // the accuracy plot when only one fits
  std::optional<bool> presentation;
  std::optional<float> font_size;
  std::optional<std::string> kernels;    // the Kernels tab's part when they do not all fit: bars, precisions, tables
};

struct LessonModel {
  std::optional<std::string> dataset;
  std::optional<std::vector<int>> hidden;
  std::optional<core::Activation> activation;
};

struct LessonStep {
  int number = 0;  // from 1, as in messages
  std::optional<double> at, after;
  std::optional<LessonCondition> when;
  double timeout = 300;
  std::vector<run::Command> commands;  // "set" and "do" (not reset)
  bool reset = false;
  bool sweep = false;  // "do": "sweep": the Sweep tab's sweep (training pauses meanwhile)
  std::optional<LessonModel> model;
  std::optional<LessonView> view;
  std::optional<std::string> caption;
  double caption_seconds = 8;
  std::optional<LessonExpect> expect;
  std::optional<std::string> screenshot;
  std::optional<int> quit;
};

struct Lesson {
  std::string file;  // as given, for messages
  std::string title, description;
  // The start: the command line's settings with these over them.
  std::optional<int> batch, epochs, limit, threads;
  std::optional<float> lr;
  std::optional<core::Optimizer> optimizer;
  std::optional<core::Precision> precision;
  std::optional<std::string> dataset;
  std::optional<std::vector<int>> hidden;
  std::optional<core::Activation> activation;
  // The window: over the command line's and the remembered settings.
  std::optional<std::string> size;  // "WxH"
  std::optional<bool> presentation;
  std::optional<float> font_size;
  std::optional<std::string> tab;
  std::vector<LessonStep> steps;

  // cfg with the lesson's "settings" over it.
  core::TrainConfig apply(core::TrainConfig cfg) const;
};

// Parses and checks `text` (the contents of `file`). Throws core::Error(InvalidArgument) with one line naming the
// file, the step and the field, e.g. `lesson.json: step 3: "batch": must be an integer 1..65536, not "big"`.
// Screenshot paths are checked to be writable (core::check_output_path: in an existing folder that takes a new file).
Lesson parse_lesson(const std::string& text, const std::string& file);

// Reads `path` (core::read_regular_file: a regular file of at most 1 MiB) and parses it. Throws
// core::Error(InvalidArgument) as parse_lesson, also for a file that cannot be read ("--script: lesson file ...").
Lesson load_lesson(const std::string& path);

// Checks that need the dataset: every batch size (start and steps) at most `train_count`. Throws as parse_lesson.
void check_lesson_against_data(const Lesson& lesson, int train_count);

}  // namespace ui
