// A lesson's settings by the settings schema (core/settings_schema.hpp): the keys of "settings", "model" and "set"
// are the schema's keys, each value read as its row's type and checked by its row's rule or spellings.
#include <fmt/format.h>

#include "core/settings_schema.hpp"
#include "ui/lesson_keys.hpp"

namespace ui::lesson_json {
namespace {

// [256, 128] or "256,128", each within the row's rule.
std::vector<int> sizes(const Where& w, const core::Setting& s, const json& v, const std::string& field) {
  if (v.is_string()) {
    try {
      return std::get<std::vector<int>>(core::parse_setting(s, v.get<std::string>()));
    } catch (const core::Error&) {
    }
  } else if (v.is_array() && !v.empty()) {
    std::vector<int> out;
    bool ok = true;
    for (const auto& x : v) {
      ok = ok && x.is_number_integer() && x.get<long long>() >= s.int_rule->min && x.get<long long>() <= s.int_rule->max;
      if (ok) out.push_back(static_cast<int>(x.get<long long>()));
    }
    if (ok) return out;
  }
  const std::string example = core::setting_text(s, s.get(core::TrainConfig{}));  // "256,128"
  std::string listed;  // "256, 128"
  for (char c : example) listed += c == ',' ? std::string(", ") : std::string(1, c);
  w.fail(field, fmt::format("must be sizes {} ({}), as [{}] or \"{}\", not {}", core::allowed(*s.int_rule),
                            s.int_rule->what, listed, example, shown(v)));
}


}  // namespace

core::SettingValue setting_value(const Where& w, const core::Setting& s, const json& v, const std::string& field) {
  switch (s.type) {
    case core::SettingType::Flag:
      return boolean(w, v, field);
    case core::SettingType::Int:
      return static_cast<long long>(integer(w, v, field, *s.int_rule));
    case core::SettingType::Real:
      return static_cast<double>(real(w, v, field, *s.real_rule));
    case core::SettingType::Seed:
      if (!v.is_number_unsigned()) w.fail(field, fmt::format("must be a whole number 0..2^64-1, not {}", shown(v)));
      return v.get<uint64_t>();
    case core::SettingType::Choice:
      return one_of(w, v, field, s.choices());
    case core::SettingType::Sizes:
      return sizes(w, s, v, field);
    case core::SettingType::Names:
    case core::SettingType::Text:
      break;  // not lesson keys (lesson_key below)
  }
  w.fail(field, "is not a lesson's setting");
}

bool lesson_key(const core::Setting& s) {
  // A machine's own set-up stays the command line's: its data folder, its devices and backends, the validation layer.
  return s.type != core::SettingType::Names && s.type != core::SettingType::Text && s.key != "device" &&
         s.key != "validation";
}

std::vector<core::SettingAssignment> setting_assignments(const Where& w, const json& object, const std::string& field,
                                                         bool (*allowed)(const core::Setting&),
                                                         const std::map<std::string, std::string>& aliases) {
  std::set<std::string> keys;
  for (const core::Setting& s : core::settings())
    if (allowed(s)) keys.insert(std::string(s.key));
  for (const auto& [alias, key] : aliases) keys.insert(alias);
  only_keys(w, object, field, keys);
  std::vector<core::SettingAssignment> out;
  for (const auto& [key, value] : object.items()) {
    const auto alias = aliases.find(key);
    const core::Setting& s = core::setting(alias != aliases.end() ? alias->second : key);
    out.push_back({&s, setting_value(w, s, value, field + "." + key)});
  }
  return out;
}

std::vector<run::Command> set_commands(const Where& w, const json& o) {
  // "input" is an object of the pipeline's settings (keys left out take the command line's defaults), or a source.
  auto live = [](const core::Setting& s) { return s.change == core::SettingChange::Live && lesson_key(s); };
  json flat = o;
  if (o.is_object() && o.contains("input") && o["input"].is_object()) {
    flat.erase("input");
    const json& in = o["input"];
    only_keys(w, in, "set.input", {"source", "augment", "loader_threads", "prefetch", "pageable"});
    for (const auto& [key, value] : in.items()) flat[key == "source" ? "input" : key] = value;
  }
  core::TrainConfig scratch;  // the values given, over the defaults
  const auto given = setting_assignments(w, flat, "set", live, {});
  for (const auto& a : given) a.setting->set(scratch, a.value);
  std::vector<run::Command> commands;
  bool input_sent = false;  // one SetInput carries the whole pipeline
  for (const auto& a : given) {
    run::Command c = run::live_command(*a.setting, scratch);
    if (c.kind == run::Command::Kind::SetInput && std::exchange(input_sent, true)) continue;
    commands.push_back(c);
  }
  return commands;
}

}  // namespace ui::lesson_json
