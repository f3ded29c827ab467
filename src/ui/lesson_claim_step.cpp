// Reading a step's claim keys (lesson_claim.hpp): "measure", "claim", "caption" and "notes" as a text per outcome,
// "summary"; and the checks across steps (a claim's measurements come before it).
#include <fmt/format.h>

#include <set>

#include "ui/lesson.hpp"
#include "ui/lesson_json.hpp"

namespace ui::lesson_json {
namespace {

// A label or summary name: letters, digits, '_' and '-' (what an expression's @LABEL reads).
std::string plain_name(const Where& w, const json& v, const std::string& field, const std::string& what) {
  const std::string s = text(w, v, field);
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      w.fail(field, fmt::format("{} is a {} of letters, digits, '_' and '-', not {}", shown(v), what, shown(v)));
  if (s.size() > 64) w.fail(field, fmt::format("{} is too long: at most 64 characters", shown(v)));
  return s;
}

ClaimTexts texts_of(const Where& w, const json& v, const std::string& field, const LessonClaim& claim) {
  const bool even = claim.within.has_value();
  if (even)
    only_keys(w, v, field, {"yes", "no", "even"});
  else
    only_keys(w, v, field, {"yes", "no"});
  ClaimTexts t;
  for (const char* key : {"yes", "no", "even"}) {
    if (std::string(key) == "even" && !even) continue;
    if (!v.contains(key))
      w.fail(field, fmt::format("missing \"{}\": a claim's text gives every outcome (yes, no{})", key,
                                even ? ", even" : ""));
    const std::string f = field + "." + key;
    std::string s = text(w, v[key], f);
    if (const std::string why = claim_text_problem(s); !why.empty()) w.fail(f, why);
    (std::string(key) == "yes" ? t.yes : std::string(key) == "no" ? t.no : t.even) = std::move(s);
  }
  return t;
}

}  // namespace

void claim_keys_of(const Where& w, const json& v, LessonStep& s) {
  if (v.contains("measure")) {
    if (!v.contains("when") || !v["when"].is_object() || !v["when"].contains("steady"))
      w.fail("measure", "goes with \"when\": {\"steady\": ...}: figures are measured only once they are steady");
    s.measure = plain_name(w, v["measure"], "measure", "name");
  }
  if (v.contains("claim")) {
    const json& c = v["claim"];
    std::string expr;
    std::optional<double> within;
    if (c.is_object()) {
      only_keys(w, c, "claim", {"is", "within"});
      if (!c.contains("is")) w.fail("claim", "missing \"is\": the comparison, e.g. \"gpu.samples_per_s > cpu.samples_per_s\"");
      expr = text(w, c["is"], "claim.is");
      if (c.contains("within")) within = number(w, c["within"], "claim.within", 0.001, 1);
    } else {
      expr = text(w, c, "claim");
    }
    std::string error;
    LessonClaim claim = parse_claim_expression(expr, error);
    if (!error.empty()) w.fail(c.is_object() ? "claim.is" : "claim", fmt::format("cannot read {}: {}", shown(json(expr)), error));
    claim.within = within;
    if (!v.contains("caption") || !v["caption"].is_object())
      w.fail("caption", "a claim's caption is a text per outcome: {\"yes\": \"...\", \"no\": \"...\"}");
    s.caption_claim = texts_of(w, v["caption"], "caption", claim);
    if (v.contains("notes") && v["notes"].is_object()) s.notes_claim = texts_of(w, v["notes"], "notes", claim);
    s.claim = std::move(claim);
  } else {
    for (const char* key : {"caption", "notes"})
      if (v.contains(key) && v[key].is_object())
        w.fail(key, "a text per outcome goes with a \"claim\" (the comparison it answers); else give one text");
  }
  if (v.contains("summary")) {
    s.summary = plain_name(w, v["summary"], "summary", "file name (no extension: NAME.png and NAME.csv are written)");
    if (const std::string why = lesson_screenshot_name_problem(*s.summary + ".png"); !why.empty())
      w.fail("summary", fmt::format("{} {}", shown(v["summary"]), why));
    if (v.contains("screenshot"))
      w.fail("summary", "takes its own picture (NAME.png): give the \"screenshot\" a step of its own");
  }
}

void check_claim_order(const std::string& file, const std::vector<LessonStep>& steps) {
  std::set<std::string> measured;
  for (const LessonStep& s : steps) {
    const Where w{file, fmt::format("step {}", s.number)};
    // The step's own measurement is taken when its condition holds, before its claim is judged.
    if (s.measure) measured.insert(*s.measure);
    if (!s.claim) continue;
    for (const ClaimFigure* f : {&s.claim->a, s.claim->b ? &*s.claim->b : nullptr}) {
      if (!f) continue;
      if (f->label.empty() && measured.empty())
        w.fail("claim", fmt::format("{} needs a measurement before it: give an earlier steady step a \"measure\"",
                                    f->text));
      if (!f->label.empty() && !measured.count(f->label))
        w.fail("claim", fmt::format("{}: no step before this one measures \"{}\" (\"measure\": \"{}\")", f->text,
                                    f->label, f->label));
    }
  }
}

}  // namespace ui::lesson_json
