// CLI11 validators made from core/options rules: the option's text is checked (strictly parsed, NaN, sign, range,
// empty) before CLI11 converts it, so nothing CLI11 would accept or saturate ("", "nan", "18446744073709551616")
// reaches a setting, and no path option is given as "". A refusal is a core::Error(InvalidArgument) with the rule's
// one-line message, which escapes CLI::App::parse and becomes exit code 2 in main().
#pragma once
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "core/error.hpp"
#include "core/options.hpp"

namespace app {

inline CLI::Validator checked(const core::IntRule& rule) {
  return CLI::Validator([&rule](std::string& text) { return core::parse_int(text, rule), std::string(); }, "");
}

inline CLI::Validator checked(const core::RealRule& rule) {
  return CLI::Validator([&rule](std::string& text) { return core::parse_real(text, rule), std::string(); }, "");
}

// A path option given as "" (`--report ''`): refused as empty, never read as "none" (the default) and ignored.
// `give` says what to give instead: "a file name, or - for standard output".
inline CLI::Validator non_empty(std::string option, std::string give) {
  return CLI::Validator(
      [option = std::move(option), give = std::move(give)](std::string& text) {
        if (text.empty())
          throw core::Error(core::ErrorKind::InvalidArgument,
                            fmt::format("{}: the value is empty; give {}", option, give));
        return std::string();
      },
      "");
}

// --seed: any whole number 0..2^64-1.
inline CLI::Validator checked_seed() {
  return CLI::Validator([](std::string& text) { return core::parse_seed(text), std::string(); }, "");
}

}  // namespace app
