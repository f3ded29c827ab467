// The lesson parser's reading of settings by the settings schema (lesson_settings_keys.cpp): a value of a row's type
// from JSON, the assignments of a "settings" or "model" object, and the commands of a "set" object.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/settings_schema.hpp"
#include "run/command.hpp"
#include "ui/lesson_json.hpp"

namespace ui::lesson_json {

// `v` as a value of row `s`: a boolean, an integer or a number within the row's rule, one of its spellings, sizes as
// [256, 128] or "256,128". Fails (core::Error(InvalidArgument) naming the file, step and field) otherwise.
core::SettingValue setting_value(const Where& w, const core::Setting& s, const json& v, const std::string& field);

// Whether a lesson may give the row at all: not the machine's own set-up (data folder, device, backends,
// validation layer), which stays the command line's.
bool lesson_key(const core::Setting& s);

// Every key of `object` as a row allowed by `allowed` (or an alias of one: "kind" for "model"), in the object's key
// order, each value checked. Fails on an unknown key, naming what is allowed.
std::vector<core::SettingAssignment> setting_assignments(const Where& w, const json& object, const std::string& field,
                                                         bool (*allowed)(const core::Setting&),
                                                         const std::map<std::string, std::string>& aliases);

// A "set" object's commands: one per live setting given (one SetInput for the whole input pipeline, given flat or as
// the object "input": {"source", "augment", "loader_threads", "prefetch", "pageable"}).
std::vector<run::Command> set_commands(const Where& w, const json& o);

}  // namespace ui::lesson_json
