// CLI11 validators made from core/options rules: the option's text is checked (strictly parsed, NaN, sign, range,
// empty) before CLI11 converts it, so nothing CLI11 would accept or saturate ("", "nan", "18446744073709551616")
// reaches a setting. A refusal is a core::Error(InvalidArgument) with the rule's one-line message, which escapes
// CLI::App::parse and becomes exit code 2 in main().
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "core/options.hpp"

namespace app {

inline CLI::Validator checked(const core::IntRule& rule) {
  return CLI::Validator([&rule](std::string& text) { return core::parse_int(text, rule), std::string(); }, "");
}

inline CLI::Validator checked(const core::RealRule& rule) {
  return CLI::Validator([&rule](std::string& text) { return core::parse_real(text, rule), std::string(); }, "");
}

// --seed: any whole number 0..2^64-1.
inline CLI::Validator checked_seed() {
  return CLI::Validator([](std::string& text) { return core::parse_seed(text), std::string(); }, "");
}

}  // namespace app
