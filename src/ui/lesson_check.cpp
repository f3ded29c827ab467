// The checks of a lesson that need more than its text: the settings each step makes (against the start and the data,
// before the window opens), and where its screenshots go (the output folder, the files already there).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "core/error.hpp"
#include "core/text_data.hpp"
#include "core/files.hpp"
#include "run/validate.hpp"
#include "ui/lesson.hpp"
#include "ui/lesson_json.hpp"
#include "platform/folders.hpp"

namespace ui {
namespace {

namespace fs = std::filesystem;
using lesson_json::Where;

// The training set's size and shape of `cfg.dataset`: `data`'s when it is the loaded one (`loaded`), else what that
// dataset has (a lesson's "model" step may switch datasets; only the shape and the count matter here).
core::DataSplit shape_of(const core::TrainConfig& cfg, const core::DataSplit& data, const std::string& loaded) {
  core::DataSplit d;
  if (cfg.dataset == loaded) {
    d.train.count = data.train.count, d.train.features = data.train.features, d.train.classes = data.train.classes;
    d.test.count = data.test.count, d.test.features = data.test.features, d.test.classes = data.test.classes;
    for (core::Dataset* set : {&d.train, &d.test}) {  // the images' shape, for a CNN
      const core::Dataset& from = set == &d.train ? data.train : data.test;
      set->height = from.height, set->width = from.width, set->channels = from.channels;
      set->counted = from.counted;  // token data: the positions that count
    }
  } else if (core::token_data(cfg.dataset)) {  // sequences of --context tokens
    const bool task = cfg.dataset == "reverse";
    for (core::Dataset* set : {&d.train, &d.test}) {
      set->count = task ? cfg.reverse_samples : 10000;  // fortunes: about 12,000 windows of 64 tokens (a bound)
      set->features = cfg.context;
      set->classes = task ? core::kReverseVocab : 256;  // fortunes: at most a token per byte value
      set->counted = task ? cfg.context / 2 : cfg.context;
    }
  } else if (cfg.dataset == "spiral") {
    d.train.count = cfg.spiral_points * cfg.spiral_classes, d.train.features = 2, d.train.classes = cfg.spiral_classes;
  } else {  // fashion-mnist: 60,000 training images of 28 x 28 pixels, 10 classes (or the first --limit of them)
    d.train.count = cfg.limit > 0 ? std::min(cfg.limit, 60000) : 60000, d.train.features = 784, d.train.classes = 10;
    d.test.count = 10000, d.test.features = 784, d.test.classes = 10;
    for (core::Dataset* set : {&d.train, &d.test}) set->height = 28, set->width = 28, set->channels = 1;
  }
  return d;
}

// The PNG file signature (the PNG specification, section 5.2).
constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

}  // namespace

void check_lesson_settings(const Lesson& lesson, const core::TrainConfig& start, const core::DataSplit& data) {
  auto check = [&](const core::TrainConfig& cfg, const std::string& step, const std::string& field) {
    try {
      core::validate(cfg);
      run::validate_for_backends(cfg, shape_of(cfg, data, start.dataset));
    } catch (const core::Error& e) {
      Where{lesson.file, step}.fail(field, e.what());
    }
  };
  core::TrainConfig cfg = start;
  check(cfg, "", "settings");
  for (const LessonStep& s : lesson.steps) {
    if (s.commands.empty() && !s.model) continue;
    for (const auto& c : s.commands) run::apply_setting(c, cfg);
    std::string field = s.model ? "model" : "set";
    if (s.model) cfg = core::apply_settings(cfg, *s.model);
    check(cfg, fmt::format("step {}", s.number), field);
  }
}

fs::path default_lesson_output(const std::string& lesson_file) {
  const std::string stem = fs::path(lesson_file).stem().string();
  const fs::path pictures = platform::user_pictures_dir();
  if (pictures.empty())
    throw core::Error(core::ErrorKind::InvalidArgument,
                      "--output: there is no HOME to find the pictures folder in; give the folder for the lesson's "
                      "screenshots with --output DIR");
  return pictures / "trainscope" / stem;
}

void check_lesson_output(const Lesson& lesson, const fs::path& folder) {
  bool any = false;
  for (const auto& s : lesson.steps) any = any || s.screenshot.has_value() || s.summary.has_value();
  if (!any) return;  // nothing will be written: no folder is made
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    fs::create_directories(folder, ec);
    if (ec)
      throw core::Error(core::ErrorKind::InvalidArgument,
                        fmt::format("--output {}: cannot make the folder for the lesson's screenshots ({}); give a "
                                    "folder you can write with --output DIR",
                                    folder.string(), ec.message()));
  }
  for (const auto& s : lesson.steps) {
    const Where w{lesson.file, fmt::format("step {}", s.number)};
    std::vector<std::pair<fs::path, std::string>> targets;  // (file, field)
    if (s.screenshot) targets.emplace_back(folder / *s.screenshot, "screenshot");
    if (s.summary) {
      targets.emplace_back(folder / (*s.summary + ".png"), "summary");
      targets.emplace_back(folder / (*s.summary + ".csv"), "summary");
    }
    for (const auto& [path, field] : targets) {
      const std::string why = path.extension() == ".csv" ? lesson_summary_csv_problem(path)
                                                         : lesson_screenshot_target_problem(path);
      if (!why.empty()) w.fail(field, why);
      try {
        core::check_output_path(path.string(), "--output");
      } catch (const core::Error& e) {
        w.fail(field, e.what());
      }
    }
  }
}

std::string lesson_summary_csv_problem(const fs::path& path) {
  const std::string kind = core::file_kind(path.string());
  if (kind.empty()) return "";
  if (kind != "a regular file")
    return fmt::format("{} is {}: a lesson replaces only its own tables; give another --output folder", path.string(),
                       kind);
  std::ifstream in(path);
  std::string head;
  std::getline(in, head);
  if (head.rfind(kLessonSummaryCsvHeader, 0) != 0)
    return fmt::format("{} exists and is not a lesson's summary table: a lesson replaces only its own tables; move "
                       "that file or give another --output folder",
                       path.string());
  return "";
}

std::string lesson_screenshot_target_problem(const fs::path& path) {
  const std::string kind = core::file_kind(path.string());
  if (kind.empty()) return "";
  if (kind != "a regular file")
    return fmt::format("{} is {}: a lesson replaces only its own pictures (PNG files); give another --output folder",
                       path.string(), kind);
  unsigned char head[sizeof kPngSignature] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (!in || !std::equal(std::begin(head), std::end(head), std::begin(kPngSignature)))
    return fmt::format("{} exists and is not a PNG: a lesson replaces only its own pictures; move that file or give "
                       "another --output folder",
                       path.string());
  return "";
}

}  // namespace ui
