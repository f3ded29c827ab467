// What the tests of the settings schema share (test_settings_schema, test_app_lesson): a valid value of a row that
// differs from its default, so that a test can see the value arrive where the row says it goes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/settings_schema.hpp"

namespace test {

// A valid value of row `s` other than its default in TrainConfig{}: the flag flipped, the rule's lowest value (or
// the next one), 0.5 for a real (1.5 where the rule starts at 1), seed 7, another spelling, sizes {3, 5}, the cpu
// backend alone, a folder.
inline core::SettingValue other_value(const core::Setting& s) {
  const core::SettingValue d = s.get(core::TrainConfig{});
  switch (s.type) {
    case core::SettingType::Flag:
      return !std::get<bool>(d);
    case core::SettingType::Int:
      return std::get<long long>(d) == s.int_rule->min ? s.int_rule->min + 1 : s.int_rule->min;
    case core::SettingType::Real:
      return s.real_rule->min >= 1 ? 1.5 : std::get<double>(d) == 0.5 ? 0.25 : 0.5;
    case core::SettingType::Seed:
      return uint64_t{7};
    case core::SettingType::Choice: {
      const auto names = s.choices();
      return names.at(names.at(0) == std::get<std::string>(d) ? 1 : 0);
    }
    case core::SettingType::Sizes:
      return std::vector<int>{3, 5};
    case core::SettingType::Names:
      return std::vector<std::string>{"cpu"};
    case core::SettingType::Text:
      return std::string("/some/folder");
  }
  return d;
}

}  // namespace test
