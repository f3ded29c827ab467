// Reading and checking lesson scripts: one table of keys per object, every value checked, every error naming the file,
// the step and the field.
#include "ui/lesson.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/options.hpp"
#include "ui/dashboard_tabs.hpp"
#include "ui/lesson_json.hpp"
#include "ui/lesson_keys.hpp"
#include "ui/style.hpp"

namespace ui {
namespace {

using namespace lesson_json;
using json = nlohmann::json;

// The dashboard's tabs by name (ui::kTabs), for "view.tab" and "window.tab".
std::vector<std::string> tab_names() {
  std::vector<std::string> names;
  for (Tab t : kTabs) names.push_back(tab_name(t));
  return names;
}


LessonSettings settings_of(const Where& w, const json& v, const std::string& field) {
  only_keys(w, v, field, {"batch", "lr", "optimizer", "precision", "hidden", "activation"});
  const core::TrainConfig given = core::apply_settings({}, setting_assignments(w, v, field, lesson_key, {}));
  LessonSettings s;
  if (v.contains("batch")) s.batch = given.batch;
  if (v.contains("lr")) s.lr = given.lr;
  if (v.contains("optimizer")) s.optimizer = given.optimizer;
  if (v.contains("precision")) s.precision = given.precision;
  if (v.contains("hidden")) s.hidden = given.hidden;
  if (v.contains("activation")) s.activation = given.activation;
  return s;
}

// What a lesson's "model" may set: the settings that start training again from new weights.
bool model_key(const core::Setting& s) { return s.change == core::SettingChange::Reset && lesson_key(s); }

const std::vector<std::string> kBackendKeys = {"gpu", "cpu", "both"};

LessonCondition condition_of(const Where& w, const json& v) {
  only_keys(w, v, "when", {"gpu", "cpu", "both", "applied", "speedup", "sweep_done", "steady"});
  LessonCondition c;
  for (const auto& b : kBackendKeys) {
    if (!v.contains(b)) continue;
    const std::string field = "when." + b;
    const json& o = v[b];
    only_keys(w, o, field, {"step", "epoch", "steps_since_change", "paused", "failed"});
    LessonBackendCondition bc;
    if (o.contains("step")) bc.step = integer(w, o["step"], field + ".step", 0, 1LL << 40);
    if (o.contains("epoch")) bc.epoch = integer(w, o["epoch"], field + ".epoch", 0, 10000);
    if (o.contains("steps_since_change"))
      bc.steps_since_change = integer(w, o["steps_since_change"], field + ".steps_since_change", 0, 1LL << 40);
    if (o.contains("paused")) bc.paused = boolean(w, o["paused"], field + ".paused");
    if (o.contains("failed")) bc.failed = boolean(w, o["failed"], field + ".failed");
    c.backends[b] = bc;
  }
  if (v.contains("applied")) c.applied = boolean(w, v["applied"], "when.applied");
  if (v.contains("speedup")) c.speedup = boolean(w, v["speedup"], "when.speedup");
  if (v.contains("sweep_done")) c.sweep_done = boolean(w, v["sweep_done"], "when.sweep_done");
  if (v.contains("steady")) {
    const json& o = v["steady"];
    LessonSteady steady;
    if (o.is_boolean()) {
      if (!o.get<bool>()) w.fail("when.steady", "give true (or {\"steps\": N, \"seconds\": S, \"spread\": X}), or leave it out");
    } else {
      only_keys(w, o, "when.steady", {"steps", "seconds", "spread"});
      if (o.contains("steps")) steady.steps = integer(w, o["steps"], "when.steady.steps", 1, 1000000);
      if (o.contains("seconds")) steady.seconds = number(w, o["seconds"], "when.steady.seconds", 0, 600);
      if (o.contains("spread")) steady.spread = number(w, o["spread"], "when.steady.spread", 0.001, 10);
    }
    c.steady = steady;
  }
  if (c.backends.empty() && !c.applied && !c.speedup && !c.sweep_done && !c.steady) w.fail("when", "names no condition");
  return c;
}

LessonView view_of(const Where& w, const json& o) {
  only_keys(w, o, "view", {"tab", "x_axis", "plot", "presentation", "font_size", "kernels"});
  LessonView view;
  if (o.contains("tab")) view.tab = one_of(w, o["tab"], "view.tab", tab_names());
  if (o.contains("x_axis")) view.x_seconds = one_of(w, o["x_axis"], "view.x_axis", {"steps", "seconds"}) == "seconds";
  if (o.contains("plot")) view.accuracy = one_of(w, o["plot"], "view.plot", {"loss", "accuracy"}) == "accuracy";
  if (o.contains("presentation")) view.presentation = boolean(w, o["presentation"], "view.presentation");
  if (o.contains("font_size")) view.font_size = real(w, o["font_size"], "view.font_size", core::rules::font_size);
  if (o.contains("kernels")) view.kernels = one_of(w, o["kernels"], "view.kernels", {"bars", "precisions", "tables"});
  return view;
}

LessonExpect expect_of(const Where& w, const json& o) {
  only_keys(w, o, "expect", {"gpu", "cpu", "both", "applied", "figures", "peaks"});
  LessonExpect e;
  for (const auto& b : kBackendKeys)
    if (o.contains(b)) e.backends[b] = settings_of(w, o[b], "expect." + b);
  if (o.contains("applied")) e.applied = boolean(w, o["applied"], "expect.applied");
  if (o.contains("figures")) e.figures_current = one_of(w, o["figures"], "expect.figures", {"current"}) == "current";
  if (o.contains("peaks") && !(e.peaks = boolean(w, o["peaks"], "expect.peaks")))
    w.fail("expect.peaks", "give true, or leave it out");
  if (e.backends.empty() && !e.applied && !e.figures_current && !e.peaks) w.fail("expect", "expects nothing");
  return e;
}

LessonStep step_of(const Where& w, const json& v) {
  only_keys(w, v, "", {"next", "at", "after", "when", "timeout", "set", "do", "model", "view", "caption",
                       "caption_seconds", "notes", "expect", "screenshot", "quit", "measure", "claim", "summary"});
  LessonStep s;
  int triggers = 0;
  if (v.contains("next")) {
    if (!boolean(w, v["next"], "next")) w.fail("next", "give true (the step waits for the teacher), or leave it out");
    s.next = true;
    ++triggers;
  }
  if (v.contains("at")) s.at = number(w, v["at"], "at", 0, 1e6), ++triggers;
  if (v.contains("after")) s.after = number(w, v["after"], "after", 0, 1e6), ++triggers;
  if (v.contains("when")) s.when = condition_of(w, v["when"]), ++triggers;
  if (triggers > 1) w.fail(s.next ? "next" : "at", "a step has one trigger: \"next\", \"at\", \"after\" or \"when\"");
  if (s.when && s.when->steady) s.timeout = 120;
  if (v.contains("timeout")) {
    if (!s.when) w.fail("timeout", "only a \"when\" step waits, so only it has a timeout");
    s.timeout = number(w, v["timeout"], "timeout", 0.1, 1e6);
  }
  if (v.contains("set")) {
    s.commands = set_commands(w, v["set"]);
    if (s.commands.empty()) w.fail("set", "names no setting");
  }
  if (v.contains("do")) {
    const std::string d = one_of(w, v["do"], "do", {"pause", "resume", "single_step", "reset", "sweep"});
    using K = run::Command::Kind;
    if (d == "reset") s.reset = true;
    if (d == "sweep") s.sweep = true;
    if (d == "pause") s.commands.push_back(run::Command(K::Pause));
    if (d == "resume") s.commands.push_back(run::Command(K::Resume));
    if (d == "single_step") s.commands.push_back(run::Command(K::SingleStep));
  }
  if (v.contains("model")) s.model = setting_assignments(w, v["model"], "model", model_key, {{"kind", "model"}});
  if (v.contains("view")) s.view = view_of(w, v["view"]);
  claim_keys_of(w, v, s);  // "measure", "claim", a caption and notes per outcome, "summary"
  if (v.contains("caption") && !s.caption_claim) s.caption = text(w, v["caption"], "caption", true);
  if (v.contains("caption_seconds")) {
    if (!s.caption && !s.caption_claim) w.fail("caption_seconds", "goes with a \"caption\"");
    s.caption_seconds = number(w, v["caption_seconds"], "caption_seconds", 0.1, 1e6);
  }
  if (v.contains("notes") && !s.notes_claim) s.notes = text(w, v["notes"], "notes");
  if (v.contains("expect")) s.expect = expect_of(w, v["expect"]);
  if (v.contains("screenshot")) {
    s.screenshot = text(w, v["screenshot"], "screenshot");
    if (const std::string why = lesson_screenshot_name_problem(*s.screenshot); !why.empty())
      w.fail("screenshot", fmt::format("{} {}", shown(v["screenshot"]), why));
  }
  if (v.contains("quit")) {
    const json& q = v["quit"];
    if (q.is_boolean()) {
      if (!q.get<bool>()) w.fail("quit", "give true (exit 0) or an exit code 0..255, or leave it out");
      s.quit = 0;
    } else {
      s.quit = static_cast<int>(integer(w, q, "quit", 0, 255));
    }
  }
  // A step with a trigger and nothing else waits (for a condition, or some seconds): the lesson's log says when.
  if (s.commands.empty() && !s.reset && !s.sweep && !s.model && !s.view && !s.caption && !s.notes && !s.expect &&
      !s.screenshot && !s.quit && !s.measure && !s.claim && !s.summary && triggers == 0)
    w.fail("", "does nothing (give a trigger to wait for, or set, do, model, view, caption, notes, expect, screenshot, "
               "quit)");
  return s;
}

}  // namespace

core::TrainConfig Lesson::apply(core::TrainConfig cfg) const { return core::apply_settings(cfg, settings); }

Lesson parse_lesson(const std::string& contents, const std::string& file) {
  Where w{file, ""};
  json root;
  try {
    // A lesson nests 5 levels deep; far deeper nesting is refused while parsing (nlohmann parses iteratively, but a
    // value 500,000 levels deep would overflow the stack when an error message shows it).
    // The keys of each open object, so that a key given twice is refused (JSON keeps only the last one silently).
    std::vector<std::set<std::string>> keys;
    root = json::parse(contents, [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth > kMaxLessonDepth)
        throw core::Error(core::ErrorKind::InvalidArgument,
                          fmt::format("{}: nested more than {} levels deep; a lesson is an object {{\"title\": ..., "
                                      "\"steps\": [...]}}",
                                      file, kMaxLessonDepth));
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
        throw core::Error(core::ErrorKind::InvalidArgument,
                          fmt::format("{}: \"{}\" is given twice in one object; give each key once", file,
                                      shown_key(parsed.get<std::string>())));
      return true;
    });
  } catch (const json::parse_error& e) {
    // nlohmann's message ends with the byte position; say it in our words.
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("{}: not valid JSON at byte {}; a lesson is an object {{\"title\": ..., \"steps\": "
                                  "[...]}}",
                                  file, e.byte));
  } catch (const json::out_of_range&) {
    // nlohmann reports a number beyond a double's range (1e309) as out_of_range 406, not as a parse error (found by
    // fuzz/fuzz_lesson: it left parse_lesson as an "unexpected error", exit 1 instead of 2).
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("{}: not valid JSON: a number is too large (beyond 1.8e308)", file));
  }
  only_keys(w, root, "", {"title", "description", "settings", "window", "steps"});
  Lesson l;
  l.file = file;
  if (!root.contains("title")) w.fail("title", "missing: every lesson has a title");
  l.title = text(w, root["title"], "title");
  if (root.contains("description")) l.description = text(w, root["description"], "description", true);
  if (root.contains("settings")) l.settings = setting_assignments(w, root["settings"], "settings", lesson_key, {});
  if (root.contains("window")) {
    const json& o = root["window"];
    only_keys(w, o, "window", {"size", "presentation", "font_size", "tab"});
    if (o.contains("size")) {  // said as the lesson's, not as --size (issue 34)
      l.size = text(w, o["size"], "window.size");
      int width = 0, height = 0;
      if (!core::parse_window_size(*l.size, width, height))
        w.fail("window.size", fmt::format("{}, not {}", core::kSizeRule, shown(o["size"])));
    }
    if (o.contains("presentation")) l.presentation = boolean(w, o["presentation"], "window.presentation");
    if (o.contains("font_size"))
      l.font_size = real(w, o["font_size"], "window.font_size", core::rules::font_size);
    if (o.contains("tab")) l.tab = one_of(w, o["tab"], "window.tab", tab_names());
  }
  if (!root.contains("steps")) w.fail("steps", "missing: a lesson has a list of steps");
  const json& steps = root["steps"];
  if (!steps.is_array() || steps.empty()) w.fail("steps", "must be a non-empty list [{...}, ...]");
  for (size_t i = 0; i < steps.size(); ++i) {
    Where sw{file, fmt::format("step {}", i + 1)};
    if (!steps[i].is_object()) sw.fail("", fmt::format("must be an object {{...}}, not {}", shown(steps[i])));
    l.steps.push_back(step_of(sw, steps[i]));
    l.steps.back().number = static_cast<int>(i + 1);
  }
  check_claim_order(file, l.steps);
  return l;
}

Lesson load_lesson(const std::string& path) {
  std::string contents;
  try {
    contents = core::read_regular_file(path, core::kMaxSmallFileBytes, "lesson file");
  } catch (const core::Error& e) {  // a file the command line named: bad input (exit 2), said with the option
    throw core::Error(core::ErrorKind::InvalidArgument, fmt::format("--script: {}", e.what()));
  }
  return parse_lesson(contents, path);
}

int Lesson::points() const {
  int n = 1;
  for (const auto& s : steps) n += s.next ? 1 : 0;
  return n;
}

std::string lesson_screenshot_name_problem(const std::string& name) {
  if (name.size() > 255) return "is too long: a file name has at most 255 bytes";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return "holds a control character (a NUL, a newline, ...): give a plain file name";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return "is not a plain file name: a lesson's screenshots go into its output folder (--output), with no folders of "
           "their own";
  if (name == "." || name == ".." || name.front() == '.')
    return "is not a plain file name (it starts with a dot)";
  if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".png") != 0)
    return "must end in .png: a lesson writes PNG pictures only";
  return "";
}

}  // namespace ui
