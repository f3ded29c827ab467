// The settings schema: one row per training setting, read by everything that names, checks, changes or reports a
// setting. A row holds the setting's key (the lesson's and the report's name), its command-line flag, its --help
// group and text, its type with its range (core/options.hpp) or its spellings, its default (from TrainConfig{}), how
// the dashboard changes it (live, by a reset, or only at the start) and how to read and write it in a TrainConfig.
//   - the CLI registers `train`'s and `dashboard`'s training options from the rows (app/cmd_train_options.cpp);
//   - a lesson's "settings", "set" and "model" keys are row keys, checked by the row (ui/lesson.cpp);
//   - the Controls take a combo's items and a tooltip from the row (ui/panel_controls.cpp);
//   - core::validate checks every row's value with the row's rule; the report's "config" writes every row.
// Adding a setting is one row here (and its TrainConfig field); a live one also a run::Command kind (run/command.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/config.hpp"
#include "core/options.hpp"

namespace core {

enum class SettingType {
  Flag,     // true or false (a command-line flag without a value)
  Int,      // a whole number within int_rule
  Real,     // a finite number within real_rule
  Seed,     // a whole number 0..2^64-1
  Choice,   // one of choices()
  Sizes,    // sizes "256,128", each within int_rule (hidden layers, convolutions' channels)
  Names,    // names "gpu,cpu", each one of choices(), none twice (the backends)
  Text,     // any non-empty text (a folder)
};

// How the dashboard changes a setting while it trains.
enum class SettingChange {
  Start,  // only at the start: the command line, a lesson's "settings"
  Reset,  // a new model: both backends start again from new weights (the Controls' Apply, a lesson's "model")
  Live,   // applied by each backend at its next step (a run::Command; the Controls, a lesson's "set")
};

// A setting's value. Flag: bool; Int: long long; Real: double; Seed: uint64_t; Choice, Text: std::string; Sizes:
// std::vector<int>; Names: std::vector<std::string>.
using SettingValue = std::variant<bool, long long, double, uint64_t, std::string, std::vector<int>,
                                  std::vector<std::string>>;

struct Setting {
  std::string_view key;    // "batch", "loader_threads": a lesson's key, the report's, the Controls' id
  std::string_view flag;   // "--batch"
  std::string_view group;  // --help's group: "Data", "Model", "Optimisation", "Execution", "Input pipeline", ...
  std::string_view help;   // --help's text (also the Controls' tooltip where it has one)
  SettingType type;
  SettingChange change;
  const IntRule* int_rule = nullptr;    // Int, Sizes
  const RealRule* real_rule = nullptr;  // Real
  std::vector<std::string> (*choices)() = nullptr;  // Choice, Names: the spellings
  std::string_view default_text = {};   // --help's default where TrainConfig{}'s value does not say it, else ""
  std::string_view type_name = {};      // --help's placeholder ("N", "DIR", "N[,N...]"), else from the type
  SettingValue (*get)(const TrainConfig&) = nullptr;
  void (*set)(TrainConfig&, const SettingValue&) = nullptr;  // the value already checked (check_setting)
};

// Every row, in --help's order.
std::span<const Setting> settings();
// The row of `key` ("batch"), or nullptr.
const Setting* find_setting(std::string_view key);
// The row of `key`; throws core::Error(Internal) when there is none (a programming error).
const Setting& setting(std::string_view key);

// Parses a setting's text as the command line gives it ("128", "1e-3", "adamw", "256,128", "gpu,cpu"), strictly.
// Throws core::Error(InvalidArgument) naming the flag and what is allowed, e.g.
// "--batch 0: the batch size must be 1..65536" or "--optimizer adam: must be one of sgd, adamw".
SettingValue parse_setting(const Setting& s, std::string_view text);
// Checks a value of the row's type against its rule or spellings (the lessons' and the Controls' values, which do
// not come as text). Throws core::Error(InvalidArgument) as parse_setting does.
void check_setting(const Setting& s, const SettingValue& value);
// The value as the command line writes it: "128", "0.001", "adamw", "256,128", "true".
std::string setting_text(const Setting& s, const SettingValue& value);
// The spellings of a Choice or Names row joined for messages: "sgd, adamw".
std::string choices_text(const Setting& s);

// A setting and its value: what a lesson's "settings" or "model" gives.
struct SettingAssignment {
  const Setting* setting = nullptr;
  SettingValue value;
};
// cfg with every assignment's value set, in order.
TrainConfig apply_settings(TrainConfig cfg, std::span<const SettingAssignment> assignments);

}  // namespace core
