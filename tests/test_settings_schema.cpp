// The settings schema (core/settings_schema.hpp): every row well formed, each row reading and writing its own field
// and no other, its text round trip, its checks, and every live row's command (run::live_command against
// run::apply_setting, which the trainers' sessions use).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/error.hpp"
#include "core/settings_schema.hpp"
#include "run/command.hpp"
#include "settings_test_util.hpp"

TEST_CASE("every row is well formed: unique key and flag, help, a rule or spellings for its type") {
  std::set<std::string_view> keys, flags;
  for (const core::Setting& s : core::settings()) {
    INFO(s.key);
    CHECK(keys.insert(s.key).second);
    CHECK(flags.insert(s.flag).second);
    CHECK(s.flag.substr(0, 2) == "--");
    CHECK_FALSE(s.help.empty());
    CHECK_FALSE(s.group.empty());
    CHECK((s.get != nullptr && s.set != nullptr));
    const bool needs_int = s.type == core::SettingType::Int || s.type == core::SettingType::Sizes;
    CHECK((s.int_rule != nullptr) == needs_int);
    CHECK((s.real_rule != nullptr) == (s.type == core::SettingType::Real));
    const bool needs_names = s.type == core::SettingType::Choice || s.type == core::SettingType::Names;
    CHECK((s.choices != nullptr) == needs_names);
    CHECK(core::find_setting(s.key) == &s);
  }
  CHECK(core::find_setting("no such setting") == nullptr);
  CHECK_THROWS_AS(core::setting("no such setting"), core::Error);
}

TEST_CASE("each row writes its own field and no other; its text parses back to the value") {
  const core::TrainConfig defaults;
  for (const core::Setting& s : core::settings()) {
    INFO(s.key);
    const core::SettingValue v = test::other_value(s);
    CHECK_NOTHROW(core::check_setting(s, v));
    core::TrainConfig changed = defaults;
    s.set(changed, v);
    CHECK(s.get(changed) == v);
    CHECK_FALSE(s.get(defaults) == v);
    for (const core::Setting& other : core::settings()) {
      if (&other == &s) continue;
      // weight_decay reads the optimizer's default: the one row whose value follows another's.
      if (other.key == "weight_decay" && s.key == "optimizer") continue;
      INFO("also changed: " << other.key);
      CHECK(other.get(changed) == other.get(defaults));
    }
    if (s.type != core::SettingType::Flag) CHECK(core::parse_setting(s, core::setting_text(s, v)) == v);
  }
}

TEST_CASE("values out of a row's range or spellings are refused, naming the option") {
  auto refused = [](const char* key, const char* text, const char* says) {
    INFO(key << " " << text);
    try {
      core::parse_setting(core::setting(key), text);
      FAIL("accepted");
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::InvalidArgument);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  refused("batch", "0", "--batch 0: the batch size must be 1..65536");
  refused("lr", "nan", "--lr nan: not a finite number");
  refused("optimizer", "adam", "--optimizer adam: must be one of sgd, adamw");
  refused("activation", "swish", "must be one of relu, gelu, silu");
  refused("precision", "fp8", "must be one of fp32, fp16, bf16");
  refused("hidden", "256,,128", "an empty item");
  refused("hidden", "256,0", "--hidden 0:");
  refused("conv", "2048", "--conv 2048:");
  refused("backends", "gpu,gpu", "--backend gpu,gpu: gpu is named twice");
  refused("backends", "tpu", "unknown name tpu");
  refused("seed", "-1", "--seed -1: negative");
  refused("data_dir", "", "--data: the value is empty");
}

TEST_CASE("every live row has its command, and the command sets what the row reads") {
  const core::TrainConfig defaults;
  int live = 0;
  for (const core::Setting& s : core::settings()) {
    INFO(s.key);
    if (s.change != core::SettingChange::Live) {
      CHECK_THROWS_AS(run::live_command(s, defaults), core::Error);
      continue;
    }
    ++live;
    core::TrainConfig wanted = defaults;
    s.set(wanted, test::other_value(s));
    core::TrainConfig applied = defaults;
    run::apply_setting(run::live_command(s, wanted), applied);  // the sessions' own application of a command
    CHECK(s.get(applied) == s.get(wanted));
  }
  CHECK(live >= 12);  // batch, lr, optimizer, precision, threads, 5 of the input pipeline, 3 toggles
}
