// Strict parsing and range checks of numeric settings (see options.hpp): std::from_chars reports overflow instead of
// saturating, and accepts no leading spaces, no '+' and nothing after the number.
#include "core/options.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace core {
namespace {

[[noreturn]] void refuse(std::string_view option, std::string_view value, const std::string& why) {
  // An empty value is named as such ("--batch: the value is empty; ..."), never shown as a number.
  throw Error(ErrorKind::InvalidArgument, value.empty() ? fmt::format("{}: {}", option, why)
                                                        : fmt::format("{} {}: {}", option, value, why));
}

std::string with_note(std::string text, std::string_view note) {
  if (!note.empty()) text += fmt::format(" ({})", note);
  return text;
}

std::string must_be(std::string_view what, const std::string& range, std::string_view note) {
  return with_note(fmt::format("{} must be {}", what, range), note);
}

}  // namespace

std::string allowed(const IntRule& rule) { return fmt::format("{}..{}", rule.min, rule.max); }

std::string allowed(const RealRule& rule) {
  if (rule.max >= kUnbounded) return fmt::format("a finite number {} {:g}", rule.min_open ? ">" : ">=", rule.min);
  if (rule.min_open && !rule.max_open) return fmt::format("a number > {:g} and <= {:g}", rule.min, rule.max);
  return fmt::format("in {}{:g}, {:g}{}", rule.min_open ? '(' : '[', rule.min, rule.max, rule.max_open ? ')' : ']');
}

void check(const IntRule& rule, long long value) {
  if (value < rule.min || value > rule.max)
    refuse(rule.option, std::to_string(value), must_be(rule.what, allowed(rule), rule.note));
}

void check(const RealRule& rule, double value) {
  const bool ok = std::isfinite(value) && (rule.min_open ? value > rule.min : value >= rule.min) &&
                  (rule.max_open ? value < rule.max : value <= rule.max);
  // "{}": the shortest text that reads back as the value (as the float the setting is, where it is one: -0.01f, not
  // -0.009999999776482582), so that 10.0000001 is never shown as the allowed 10.
  const float as_float = static_cast<float>(value);
  const std::string text =
      static_cast<double>(as_float) == value ? fmt::format("{}", as_float) : fmt::format("{}", value);
  if (!ok) refuse(rule.option, text, must_be(rule.what, allowed(rule), rule.note));
}

long long parse_int(std::string_view text, const IntRule& rule) {
  const std::string range = must_be(rule.what, allowed(rule), rule.note);
  if (text.empty()) refuse(rule.option, text, "the value is empty; " + range);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    refuse(rule.option, text, fmt::format("too {} for a whole number; {}", text[0] == '-' ? "small" : "large", range));
  if (ec != std::errc() || end != text.data() + text.size())
    refuse(rule.option, text, fmt::format("not a whole number; {}", range));
  check(rule, value);
  return value;
}

double parse_real(std::string_view text, const RealRule& rule) {
  const std::string range = must_be(rule.what, allowed(rule), rule.note);
  if (text.empty()) refuse(rule.option, text, "the value is empty; " + range);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) refuse(rule.option, text, fmt::format("out of range; {}", range));
  if (ec != std::errc() || end != text.data() + text.size())
    refuse(rule.option, text, fmt::format("not a number; {}", range));
  if (!std::isfinite(value)) refuse(rule.option, text, fmt::format("not a finite number; {}", range));
  // The settings are 32-bit floats: a value that would become 0 or infinity there is refused as given, not later as
  // the 0 it would have become ("--lr 1e-50" once read "--lr 0: must be > 0").
  const float stored = static_cast<float>(value);
  if ((value != 0 && stored == 0) || !std::isfinite(stored))
    refuse(rule.option, text,
           fmt::format("{} for a 32-bit float setting (|x| from {:g} to {:g}); {}",
                       stored == 0 ? "too small" : "too large", std::numeric_limits<float>::denorm_min(),
                       std::numeric_limits<float>::max(), range));
  try {
    check(rule, value);
  } catch (const Error&) {
    refuse(rule.option, text, range);  // the text as given: never a rounded value that seems to obey the rule
  }
  return value;
}

uint64_t parse_seed(std::string_view text) {
  const std::string range = fmt::format("the seed must be a whole number 0..{}", std::numeric_limits<uint64_t>::max());
  if (text.empty()) refuse("--seed", text, "the value is empty; " + range);
  if (text[0] == '-') refuse("--seed", text, fmt::format("negative; {}", range));
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) refuse("--seed", text, fmt::format("too large; {}", range));
  if (ec != std::errc() || end != text.data() + text.size())
    refuse("--seed", text, fmt::format("not a whole number; {}", range));
  return value;
}

bool parse_window_size(std::string_view text, int& width, int& height) {
  const size_t x = text.find('x');
  auto number = [](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && out >= 64 && out <= 16384;
  };
  return x != std::string_view::npos && number(text.substr(0, x), width) && number(text.substr(x + 1), height);
}

}  // namespace core
