// The lesson parser's JSON helpers (lesson.cpp, lesson_check.cpp): where a value sits, for messages, and the checks of
// one value each (a number in a range, an integer by its core/options rule, a string, one of some names), every
// failure one core::Error(InvalidArgument) naming the file, the step and the field.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/options.hpp"

namespace ui {
struct LessonStep;
}

namespace ui::lesson_json {

using json = nlohmann::json;

constexpr int kMaxLessonDepth = 32;  // JSON nesting levels a lesson file may use (it needs 5)

// Where a value sits, for messages: "lesson.json: step 3".
struct Where {
  std::string file, step;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("{}{}: {}{}", file, step.empty() ? "" : ": " + step,
                                  field.empty() ? "" : "\"" + field + "\": ", what));
  }
};

inline std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// A key or name from the file as a message shows it: escaped as JSON (a key with a line break stays on the message's
// one line) and at most 40 bytes (a 300 KB key makes no error line).
inline std::string shown_key(const std::string& key) {
  std::string s = json(key).dump(-1, ' ', false, json::error_handler_t::replace);
  s = s.substr(1, s.size() - 2);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// Checks that `object` has only keys of `allowed`, naming the first unknown one and what is allowed.
inline void only_keys(const Where& w, const json& object, const std::string& field, const std::set<std::string>& allowed) {
  if (!object.is_object()) w.fail(field, fmt::format("must be an object {{...}}, not {}", shown(object)));
  for (const auto& [key, value] : object.items()) {
    (void)value;
    if (allowed.count(key)) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    w.fail(field.empty() ? shown_key(key) : field + "." + shown_key(key), fmt::format("unknown key (allowed: {})", list));
  }
}

inline double number(const Where& w, const json& v, const std::string& field, double lo, double hi) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    w.fail(field, fmt::format("must be a number {:g}..{:g}, not {}", lo, hi, shown(v)));
  return v.get<double>();
}

// long long, not long: 32 bits on Windows, where "step" bounds of 2^40 would not fit.
inline long long integer(const Where& w, const json& v, const std::string& field, long long lo, long long hi) {
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
    w.fail(field, fmt::format("must be an integer {}..{}, not {}", lo, hi, shown(v)));
  return v.get<long long>();
}

// A setting checked with its rule from core/options.hpp (the command line's): "the batch size must be 1..65536".
inline long integer(const Where& w, const json& v, const std::string& field, const core::IntRule& rule) {
  bool ok = v.is_number_integer();
  if (ok) {
    try {
      core::check(rule, v.get<long long>());
    } catch (const core::Error&) {
      ok = false;
    }
  }
  if (!ok) w.fail(field, fmt::format("{} must be an integer {}, not {}", rule.what, core::allowed(rule), shown(v)));
  return static_cast<long>(v.get<long long>());
}

// A real setting checked with its rule, as the 32-bit float the settings store: a value the rule allows that a float
// turns into 0 or infinity (an lr of 1e-300) is refused here, not by the trainer a minute later.
inline float real(const Where& w, const json& v, const std::string& field, const core::RealRule& rule) {
  bool ok = v.is_number();
  std::string as_float;
  if (ok) {
    try {
      core::check(rule, v.get<double>());
      const float f = static_cast<float>(v.get<double>());
      if (!std::isfinite(f) || (f == 0.0f) != (v.get<double>() == 0.0)) as_float = fmt::format(" ({:g} as a 32-bit float)", f);
      core::check(rule, f);
    } catch (const core::Error&) {
      ok = false;
    }
  }
  if (!ok) w.fail(field, fmt::format("{} must be {}, not {}{}", rule.what, core::allowed(rule), shown(v), as_float));
  return static_cast<float>(v.get<double>());
}

inline bool boolean(const Where& w, const json& v, const std::string& field) {
  if (!v.is_boolean()) w.fail(field, fmt::format("must be true or false, not {}", shown(v)));
  return v.get<bool>();
}

inline std::string text(const Where& w, const json& v, const std::string& field, bool may_be_empty = false) {
  if (!v.is_string() || (!may_be_empty && v.get<std::string>().empty()))
    w.fail(field, fmt::format("must be a{} string, not {}", may_be_empty ? "" : " non-empty", shown(v)));
  return v.get<std::string>();
}

// One of `names` (a string equal to one of them), or a failure listing them.
inline std::string one_of(const Where& w, const json& v, const std::string& field, const std::vector<std::string>& names) {
  const std::string s = v.is_string() ? v.get<std::string>() : std::string();
  for (const auto& n : names)
    if (s == n) return s;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  w.fail(field, fmt::format("must be one of {}, not {}", list, shown(v)));
}

// The claim keys of a step ("measure", "claim", "caption"/"notes" as objects, "summary"; lesson_claim_step.cpp).
void claim_keys_of(const Where& w, const json& step, LessonStep& s);

// Checks across steps: every label a claim names is measured by an earlier step, a claim has a measurement before it.
void check_claim_order(const std::string& file, const std::vector<LessonStep>& steps);

}  // namespace ui::lesson_json
