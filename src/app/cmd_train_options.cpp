// The training options of `train`, `dashboard` and `sweep`, registered from the settings schema
// (core/settings_schema.hpp): one option per row, with the row's help, group, default and check; then the options
// given turned into the TrainConfig (finish_config), with --preset and the CNN's default dense layer.
#include <fmt/format.h>

#include <algorithm>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "core/settings_schema.hpp"
#include "vk/device.hpp"
#include "vk/devices.hpp"

namespace app {
namespace {

// Whether the option was given (a command may have removed some: sweep sets the batch and threads itself).
bool given(const TrainOptions& o, std::string_view flag) {
  const CLI::Option* option = o.command ? o.command->get_option_no_throw(std::string(flag)) : nullptr;
  return option && option->count() > 0;
}

// --help's placeholder for a row's value: the row's own, the spellings of a choice ("sgd|adamw"), or the type's.
std::string type_name(const core::Setting& s) {
  if (!s.type_name.empty()) return std::string(s.type_name);
  switch (s.type) {
    case core::SettingType::Choice: {
      std::string names;
      for (const auto& n : s.choices()) names += (names.empty() ? "" : "|") + n;
      return names;
    }
    case core::SettingType::Int:
      return "INT";
    case core::SettingType::Real:
      return "FLOAT";
    case core::SettingType::Seed:
      return "UINT";
    case core::SettingType::Flag:
    case core::SettingType::Sizes:
    case core::SettingType::Names:
    case core::SettingType::Text:
      return "TEXT";
  }
  return "TEXT";
}

// The Vulkan devices, or nothing when Vulkan is missing: then the gpu backend reports that itself when it starts.
std::optional<std::vector<vk::DeviceInfo>> try_list_devices() {
  try {
    return vk::list_devices();
  } catch (const core::Error& e) {
    if (e.kind() == core::ErrorKind::InvalidArgument) throw;  // a bad TRAINSCOPE_DEVICE_PROFILE
    return std::nullopt;
  }
}

void check_device(const core::TrainConfig& cfg, const std::optional<std::vector<vk::DeviceInfo>>& devices) {
  if (cfg.device < 0 || !devices) return;  // its range is core::rules::device, checked by core::validate
  const int count = static_cast<int>(devices->size());
  if (cfg.device >= count)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--device {}: no such Vulkan device; this machine has {} (0..{}), see trainscope "
                                  "devices",
                                  cfg.device, count, count - 1));
}

// --preset seed-mlp: the preset's settings, under every option given explicitly (applied after it).
void apply_preset(TrainOptions& o) {
  if (o.preset != "seed-mlp") return;
  core::TrainConfig& c = o.config;
  c.dataset = "random";
  c.hidden = {2048, 2048};
  c.activation = core::Activation::GELU;
  c.optimizer = core::Optimizer::AdamW;
  c.batch = 512;
  c.epochs = 1;
  c.random_features = 1024;
  c.random_classes = 10;
  c.random_samples = 10240;
}

}  // namespace

void add_training_options(CLI::App* t, TrainOptions& o) {
  o.command = t;
  const core::TrainConfig defaults = o.config;  // the command's own (the dashboard trains until stopped)
  for (const core::Setting& s : core::settings()) {
    const std::string flag(s.flag), help(s.help);
    if (s.type == core::SettingType::Flag) {
      t->add_flag(flag)->description(help)->group(std::string(s.group));
      continue;
    }
    // The text as given, parsed and checked by the row when CLI11 reads it (a refusal is a core::Error: exit 2).
    std::string& text = o.texts[std::string(s.key)];
    text = s.default_text.empty() ? core::setting_text(s, s.get(defaults)) : std::string(s.default_text);
    t->add_option(flag, text, help)
        ->check(CLI::Validator([&s](std::string& value) { return core::parse_setting(s, value), std::string(); }, ""))
        ->type_name(type_name(s))
        ->group(std::string(s.group));
  }
}

// Token data trains the transformer, and the transformer token data, where the other is not given; its MLP
// expansions use GELU (GPT-2's) unless --activation says otherwise. Settings of the other models are refused rather
// than ignored.
void transformer_defaults(TrainOptions& o) {
  core::TrainConfig& cfg = o.config;
  const bool tokens = core::token_data(cfg.dataset);
  if (tokens && !given(o, "--model")) cfg.model = core::ModelKind::Transformer;
  if (cfg.model != core::ModelKind::Transformer) {
    for (const char* option : {"--layers", "--heads", "--embed"})
      if (given(o, option))
        throw core::Error(core::ErrorKind::InvalidArgument,
                          fmt::format("{} sets up the transformer: add --model transformer", option));
    return;
  }
  if (!given(o, "--dataset")) cfg.dataset = "reverse";
  if (!given(o, "--activation")) cfg.activation = core::Activation::GELU;
  if (given(o, "--hidden"))
    throw core::Error(core::ErrorKind::InvalidArgument,
                      "--hidden sets the MLP's layers: the transformer's are --layers, --embed (its MLPs are 4x the "
                      "width, as GPT-2's)");
}

std::optional<std::vector<vk::DeviceInfo>> finish_config(TrainOptions& o) {
  core::TrainConfig& cfg = o.config;
  apply_preset(o);
  for (const core::Setting& s : core::settings())
    if (given(o, s.flag))
      s.set(cfg, s.type == core::SettingType::Flag ? core::SettingValue(true)
                                                    : core::parse_setting(s, o.texts.at(std::string(s.key))));
  // A CNN's dense part: one hidden layer of 128 (conv 32, conv 64, dense 128: the classic small Fashion-MNIST CNN).
  if (cfg.model == core::ModelKind::CNN && !given(o, "--hidden")) cfg.hidden = {128};
  transformer_defaults(o);
  if (!cfg.input.host())
    for (const char* option : {"--augment", "--loader-threads", "--prefetch", "--pageable"})
      if (given(o, option))
        throw core::Error(core::ErrorKind::InvalidArgument,
                          fmt::format("{} sets up the host input pipeline: add --input host (the default, --input "
                                      "device, gathers each batch on the GPU)",
                                      option));
  if (cfg.model != core::ModelKind::CNN && given(o, "--conv"))  // ignored, silently, before
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("--conv {}: sets the convolutions of the CNN; add --model cnn (the MLP has none)",
                                  o.texts.at("conv")));
  core::validate(cfg);
  std::optional<std::vector<vk::DeviceInfo>> devices;
  if (std::find(cfg.backends.begin(), cfg.backends.end(), "gpu") != cfg.backends.end()) devices = try_list_devices();
  check_device(cfg, devices);
  return devices;
}

}  // namespace app
