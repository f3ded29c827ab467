// Lesson scripts (ui/lesson.hpp) and their runner (ui/lesson_runner.hpp), without a window: every malformed script is
// refused naming the file, the step and the field; a lesson's steps run on their triggers (time, conditions, with
// timeouts), send their commands, wait for screenshots, and check what the trainers run (from BackendRun::running,
// never from the controls), failing with exit 1 and the difference when it is not what they expect.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/settings_schema.hpp"
#include "lesson_test_util.hpp"
#include "settings_test_util.hpp"
#include "vk/devices.hpp"
#include "ui/lesson.hpp"
#include "ui/lesson_runner.hpp"

using test::FakeHost;
using test::parse_error;
using test::run_of;
using test::view_of;
namespace fs = std::filesystem;

namespace {

// test::other_value as a lesson writes it (JSON).
nlohmann::json lesson_value(const core::Setting& s) {
  nlohmann::json j;
  std::visit([&](const auto& v) { j = v; }, test::other_value(s));
  return j;
}

}  // namespace

TEST_CASE("every setting of the schema a lesson may give is read from \"settings\", \"set\" and \"model\"") {
  nlohmann::json settings = nlohmann::json::object(), set = nlohmann::json::object(), model = nlohmann::json::object();
  int keys = 0;
  for (const core::Setting& s : core::settings()) {
    if (s.type == core::SettingType::Names || s.type == core::SettingType::Text || s.key == "device" ||
        s.key == "validation")
      continue;  // the machine's own set-up: the command line's only
    ++keys;
    settings[std::string(s.key)] = lesson_value(s);
    if (s.change == core::SettingChange::Live) set[std::string(s.key)] = lesson_value(s);
    if (s.change == core::SettingChange::Reset) model[std::string(s.key)] = lesson_value(s);
  }
  CHECK(keys >= 28);
  const nlohmann::json lesson = {{"title", "t"}, {"settings", settings},
                                 {"steps", {{{"set", set}}, {{"model", model}}}}};
  const ui::Lesson l = ui::parse_lesson(lesson.dump(), "l.json");
  const core::TrainConfig start = l.apply(core::TrainConfig{});
  core::TrainConfig after_set;  // the commands of "set", applied as a session applies them
  for (const auto& c : l.steps.at(0).commands) run::apply_setting(c, after_set);
  const core::TrainConfig after_model = core::apply_settings({}, *l.steps.at(1).model);
  for (const core::Setting& s : core::settings()) {
    const std::string key(s.key);
    INFO(key);
    auto as_json = [&](const core::TrainConfig& cfg) {
      nlohmann::json j;
      std::visit([&](const auto& v) { j = v; }, s.get(cfg));
      return j;
    };
    if (settings.contains(key)) CHECK(as_json(start) == settings[key]);
    if (set.contains(key)) CHECK(as_json(after_set) == set[key]);
    if (model.contains(key)) CHECK(as_json(after_model) == model[key]);
  }
  // The machine's own set-up is refused by name.
  CHECK(parse_error(R"({"title": "t", "settings": {"device": 1}, "steps": [{"at": 1}]})")
            .find("\"settings.device\": unknown key") != std::string::npos);
}

TEST_CASE("a lesson file with every kind of step is read as written") {
  const ui::Lesson l = ui::parse_lesson(R"({
    "title": "T", "description": "D",
    "settings": {"dataset": "spiral", "hidden": "32,16", "batch": 64, "precision": "bf16", "optimizer": "sgd",
                 "lr": 0.01, "epochs": 3, "limit": 100, "threads": 1, "activation": "gelu"},
    "window": {"size": "1280x720", "presentation": true, "font_size": 20, "tab": "memory"},
    "steps": [
      {"at": 2, "caption": "hello", "caption_seconds": 5},
      {"after": 1.5, "set": {"batch": 128, "lr": 0.5, "optimizer": "adamw", "precision": "fp16", "threads": 2}},
      {"when": {"gpu": {"step": 10, "paused": false, "failed": true}, "both": {"steps_since_change": 3},
                "applied": true},
       "timeout": 60, "do": "pause"},
      {"do": "reset", "model": {"hidden": [8], "activation": "relu", "dataset": "fashion-mnist"}},
      {"view": {"tab": "kernels", "x_axis": "seconds", "plot": "accuracy", "presentation": false, "font_size": 30,
                "kernels": "tables"}},
      {"expect": {"cpu": {"batch": 128, "lr": 0.5, "precision": "fp16", "hidden": [8]}, "applied": true,
                  "figures": "current"}, "screenshot": "shot.png", "quit": 3}
    ]})",
                                        "l.json");
  CHECK(l.title == "T");
  REQUIRE(l.steps.size() == 6);
  const core::TrainConfig cfg = l.apply(core::TrainConfig{});
  CHECK(cfg.dataset == "spiral");
  CHECK(cfg.hidden == std::vector<int>{32, 16});
  CHECK(cfg.batch == 64);
  CHECK(cfg.precision == core::Precision::BF16);
  CHECK(cfg.optimizer == core::Optimizer::SGD);
  CHECK(cfg.activation == core::Activation::GELU);
  CHECK(cfg.epochs == 3);
  CHECK(*l.size == "1280x720");
  CHECK(*l.tab == "memory");
  CHECK(*l.steps[0].at == 2);
  CHECK(l.steps[0].caption_seconds == 5);
  CHECK(*l.steps[1].after == 1.5);
  REQUIRE(l.steps[1].commands.size() == 5);
  CHECK(l.steps[1].commands[0].kind == run::Command::Kind::SetBatch);
  CHECK(l.steps[1].commands[0].value == 128);
  CHECK(l.steps[1].commands[3].precision == core::Precision::FP16);
  CHECK(l.steps[2].when->backends.at("gpu").step == 10);
  CHECK(l.steps[2].when->backends.at("gpu").failed == true);
  CHECK_FALSE(l.steps[2].when->backends.at("both").failed.has_value());
  CHECK(l.steps[2].when->backends.at("both").steps_since_change == 3);
  CHECK(l.steps[2].timeout == 60);
  CHECK(l.steps[2].commands.at(0).kind == run::Command::Kind::Pause);
  CHECK(l.steps[3].reset);
  CHECK(core::apply_settings({}, *l.steps[3].model).hidden == std::vector<int>{8});
  CHECK(*l.steps[4].view->tab == "kernels");
  CHECK(*l.steps[4].view->kernels == "tables");
  CHECK(l.steps[5].expect->backends.at("cpu").hidden == std::vector<int>{8});
  CHECK(*l.steps[5].quit == 3);
  CHECK(l.steps[5].number == 6);
}

TEST_CASE("a malformed lesson is refused naming the file, the step and the field") {
  const std::string head = R"({"title": "t", "steps": [)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json at all", "l.json: not valid JSON at byte"},
      {head + R"({"at": 1e309, "quit": true}]})", "l.json: not valid JSON: a number is too large"},
      {R"({"steps": [{"quit": true}]})", "l.json: \"title\": missing"},
      {R"({"title": "t"})", "\"steps\": missing"},
      {R"({"title": "t", "steps": []})", "\"steps\": must be a non-empty list"},
      {R"({"title": "t", "steps": [{"quit": true}], "extra": 1})", "\"extra\": unknown key (allowed: description"},
      {head + R"({"set": {"batch": "big"}}]})",
       "l.json: step 1: \"set.batch\": the batch size must be an integer 1..65536, not \"big\""},
      {head + R"({"quit": true}, {"wait": 3}]})", "l.json: step 2: \"wait\": unknown key (allowed: after, at,"},
      {head + R"({"set": {"batch": 0}}]})", "step 1: \"set.batch\": the batch size must be an integer 1..65536, not 0"},
      {head + R"({"set": {"threads": 2000}}]})", "\"set.threads\": the number of CPU threads must be an integer 0..1024"},
      {head + R"({"set": {"lr": -1}}]})", "\"set.lr\": the learning rate must be a number > 0 and <= 10, not -1"},
      {head + R"({"set": {"precision": "fp8"}}]})", "\"set.precision\": must be one of fp32, fp16, bf16, not \"fp8\""},
      {head + R"({"set": {}}]})", "\"set\": names no setting"},
      {head + R"({"do": "jump"}]})", "\"do\": must be one of pause, resume, single_step, reset"},
      {head + R"({"at": 1, "after": 2, "quit": true}]})", "a step has one trigger"},
      {head + R"({"timeout": 5, "quit": true}]})", "\"timeout\": only a \"when\" step waits"},
      {head + R"({"caption_seconds": 5, "quit": true}]})", "\"caption_seconds\": goes with a \"caption\""},
      {head + R"({"when": {}}]})", "\"when\": names no condition"},
      {head + R"({"when": {"tpu": {"step": 1}}}]})", "\"when.tpu\": unknown key"},
      {head + R"({"when": {"gpu": {"steps": 1}}}]})", "\"when.gpu.steps\": unknown key"},
      {head + R"({"when": {"gpu": {"failed": 1}}}]})", "\"when.gpu.failed\": must be true or false"},
      {head + R"({"model": {"hidden": "64,0"}}]})", "\"model.hidden\": must be sizes 1..65536 (each hidden layer size), as [256, 128] or \"256,128\""},
      {head + R"({"view": {"tab": "spreadsheet"}}]})", "\"view.tab\": must be one of controls, kernels"},
      {head + R"({"expect": {"both": {"batch": 32.5}}}]})", "\"expect.both.batch\": the batch size must be an integer"},
      {head + R"({"expect": {}}]})", "\"expect\": expects nothing"},
      {head + R"({"quit": false}]})", "\"quit\": give true"},
      {head + R"({"quit": 300}]})", "\"quit\": must be an integer 0..255"},
      {head + R"({}]})", "l.json: step 1: does nothing"},
      {head + R"(5]})", "l.json: step 1: must be an object"},
      {head + R"({"screenshot": ""}]})", "\"screenshot\": must be a non-empty string"},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    const std::string error = parse_error(text);
    CHECK_MESSAGE(error.find(expected) != std::string::npos, error);
    CHECK(error.find('\n') == std::string::npos);  // one line
  }
}

TEST_CASE("a lesson nested hundreds of thousands of levels deep is refused, not a crash") {
  // Under the 1 MiB cap: 500,000 '[' then as many ']'. Before the fix the error message's excerpt of the value
  // (a recursive dump) overflowed the stack: SIGSEGV instead of exit 2. Found while writing the lesson fuzz target.
  const int depth = 500000;
  for (const std::string& text : {std::string(depth, '[') + std::string(depth, ']'),
                                  R"({"title": "t", "steps": )" + std::string(depth, '[') + std::string(depth, ']') +
                                      "}"}) {
    const std::string error = parse_error(text);
    CHECK_MESSAGE(error.find("l.json: nested more than 32 levels deep") != std::string::npos, error);
  }
  // The nesting a lesson really uses is read.
  CHECK(parse_error(R"({"title": "t", "steps": [{"set": {"batch": 64}}, {"quit": true}]})").empty());
}

TEST_CASE("lesson files: unreadable ones; screenshot names; every setting checked as training would check it") {
  const fs::path dir = fs::temp_directory_path() / ("trainscope_test_lesson_" + std::to_string(getpid()));
  fs::create_directories(dir / "folder");
  auto load_error = [](const std::string& path) {
    try {
      ui::load_lesson(path);
    } catch (const core::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(load_error((dir / "missing.json").string()).find("does not exist") != std::string::npos);
  CHECK(load_error((dir / "folder").string()).find("--script: lesson file") != std::string::npos);
  std::ofstream(dir / "huge.json") << std::string(2 << 20, ' ');
  CHECK_FALSE(load_error((dir / "huge.json").string()).empty());
  // Issue 25, item 8: a screenshot is a plain PNG file name in the lesson's output folder: no folders, no "..", no
  // other extension, no NUL (which named "a^@b.png" and wrote "a").
  auto shot_error = [](const std::string& json_name) {
    return parse_error(R"({"title": "t", "steps": [{"screenshot": )" + json_name + "}]}");
  };
  CHECK(shot_error(R"("x.png")").empty());
  for (const char* bad : {R"("../notes.png")", R"("docs/x.png")", R"("/tmp/x.png")", R"("notes.txt")", R"("x.PNG")",
                          "\"a\\u0000b.png\"", "\"a\\nb.png\"", R"(".png")", R"("..")"}) {
    CAPTURE(bad);
    CHECK(shot_error(bad).find("l.json: step 1: \"screenshot\": ") != std::string::npos);
  }
  // Issue 25, item 15: what training would refuse a minute later is refused now.
  CHECK(parse_error(R"({"title": "t", "steps": [{"do": "sweep"}]})").empty());  // the documented form
  CHECK(parse_error(R"({"title": "t", "steps": [{"set": {"lr": 1e-300}}]})")
            .find("l.json: step 1: \"set.lr\": the learning rate must be a number > 0 and <= 10, not 1e-300 (0 as a "
                  "32-bit float)") != std::string::npos);
  CHECK(parse_error(R"({"title": "t", "steps": [{"set": {"lr": 1e-30}}]})").empty());  // a float holds 1e-30
  // A 300 KB unknown key makes a short message (issue 25, item 18).
  CHECK(parse_error(R"({"title": "t", "steps": [{")" + std::string(300000, 'k') + R"(": 1}]})").size() < 400);

  core::DataSplit data;  // the loaded data as the checks see it: its shape and size
  data.train.count = 1000, data.train.features = 784, data.train.classes = 10;
  core::TrainConfig start;
  start.dataset = "fashion-mnist";
  auto settings_error = [&](const std::string& text) {
    try {
      ui::check_lesson_settings(ui::parse_lesson(text, "l.json"), start, data);
    } catch (const core::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string fine = R"({"title": "t", "settings": {"batch": 64},
      "steps": [{"quit": true}, {"set": {"batch": 512}}, {"model": {"dataset": "spiral", "hidden": [64, 64]}}]})";
  CHECK(settings_error(fine).empty());
  start.batch = 64;
  CHECK(settings_error(R"({"title": "t", "steps": [{"quit": true}, {"set": {"batch": 5000}}]})")
            .find("l.json: step 2: \"set\": --batch 5000: larger than the training set (1000 samples)") !=
        std::string::npos);
  CHECK(settings_error(R"({"title": "t", "steps": [{"model": {"hidden": [65536, 65536]}}]})")
            .find("l.json: step 1: \"model\": --hidden/--batch: this model needs") != std::string::npos);
  // The spiral has 6000 points here (3 arms x 2000): a batch of 5000 fits there, not in the 1000 images.
  CHECK(settings_error(R"({"title": "t", "steps": [{"model": {"dataset": "spiral"}}, {"set": {"batch": 5000}}]})")
            .empty());
  // Issue 20: a step past the GPU's limits is refused too (run::validate_for_backends): 6000 x 65536 fp32
  // activations are 1.57 GB, within the 16 GiB cap, past a 128 MiB maxStorageBufferRange (lavapipe's, the spec's).
  const std::vector<vk::DeviceInfo>* devices = nullptr;
  try {
    devices = &vk::cached_devices();
  } catch (const core::Error&) {
  }
  if (devices && !devices->empty() &&
      devices->at(size_t(vk::pick_best_device(*devices))).limits.max_storage_buffer_range < uint64_t(6000) * 65536 * 4) {
    const std::string e = settings_error(
        R"({"title": "t", "steps": [{"model": {"dataset": "spiral", "hidden": [65536]}}, {"set": {"batch": 6000}}]})");
    CAPTURE(e);
    CHECK(e.rfind("l.json: step 2: \"set\": --batch 6000 needs a 1.57 GB buffer for layer 1's activations (6000 x "
                  "65536 fp32); ",
                  0) == 0);
    CHECK(e.find("(maxStorageBufferRange): use --batch <= ") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("the runner: triggers in time, commands through the host, captions that expire, quit") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"caption": "first", "caption_seconds": 2},
      {"at": 5, "set": {"batch": 64}},
      {"after": 1, "view": {"tab": "memory"}},
      {"do": "reset"},
      {"quit": 7}]})",
                                        "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig cfg;
  const ui::DashboardView view = view_of(cfg, {run_of("gpu", cfg, 10), run_of("cpu", cfg, 10)});
  runner.update(100.0, view, host);
  CHECK(runner.caption() == "first");
  CHECK(host.posted.empty());  // "at 5" has not come yet
  runner.update(102.5, view, host);
  CHECK(runner.caption().empty());  // 2 s are over
  runner.update(105.0, view, host);
  REQUIRE(host.posted.size() == 1);
  CHECK(host.posted[0].value == 64);
  CHECK(host.views.empty());  // "after 1": a second after the previous step
  runner.update(105.5, view, host);
  CHECK(host.views.empty());
  runner.update(106.1, view, host);
  REQUIRE(host.views.size() == 1);
  CHECK(*host.views[0].tab == "memory");
  runner.update(106.2, view, host);
  REQUIRE(host.resets.size() == 1);
  CHECK(host.resets[0].batch == cfg.batch);  // with the settings shown
  CHECK_FALSE(runner.exit_code());
  runner.update(106.3, view, host);
  CHECK(runner.exit_code() == 7);
  const auto log = runner.take_log();
  REQUIRE(log.size() == 5);
  CHECK(log[1].find("step 2 at 5.00 s: batch 64") != std::string::npos);
}

TEST_CASE("the runner: a condition waits for the trainers, and a reset's old runs count for nothing") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"set": {"batch": 64}},
      {"when": {"gpu": {"steps_since_change": 2}}},
      {"do": "reset"},
      {"when": {"both": {"step": 1}}, "timeout": 10},
      {"quit": true}]})",
                                        "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig old_cfg, new_cfg;
  new_cfg.batch = 64;
  runner.update(0, view_of(old_cfg, {run_of("gpu", old_cfg, 50)}), host);
  REQUIRE(host.posted.size() == 1);
  // The settings say 64, the GPU's trainer still runs 128 with 50 steps: its old steps do not count.
  runner.update(1, view_of(new_cfg, {run_of("gpu", old_cfg, 50)}), host);
  CHECK(host.resets.empty());
  core::BackendRun applying = run_of("gpu", new_cfg, 0);
  applying.building = true;
  runner.update(2, view_of(new_cfg, {applying}), host);
  CHECK(host.resets.empty());
  runner.update(3, view_of(new_cfg, {run_of("gpu", new_cfg, 1)}), host);
  CHECK(host.resets.empty());
  runner.update(4, view_of(new_cfg, {run_of("gpu", new_cfg, 2)}), host);
  REQUIRE(host.resets.size() == 1);
  // After the reset: the old run (generation 1, 100 steps) is not "step 1" of the new one.
  runner.update(5, view_of(new_cfg, {run_of("gpu", new_cfg, 100, 1)}), host);
  CHECK_FALSE(runner.exit_code());
  runner.update(6, view_of(new_cfg, {run_of("gpu", new_cfg, 1, 2)}), host);
  runner.update(7, view_of(new_cfg, {run_of("gpu", new_cfg, 1, 2)}), host);
  CHECK(runner.exit_code() == 0);
}

TEST_CASE("the runner: a condition that does not hold in time fails the lesson, saying where things stand") {
  const ui::Lesson l = ui::parse_lesson(
      R"({"title": "t", "steps": [{"when": {"cpu": {"epoch": 3}}, "timeout": 30}, {"quit": true}]})", "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig cfg;
  const auto view = view_of(cfg, {run_of("cpu", cfg, 40)});
  runner.update(0, view, host);
  runner.update(29, view, host);
  CHECK_FALSE(runner.exit_code());
  runner.update(30.5, view, host);
  CHECK(runner.exit_code() == 1);
  const auto log = runner.take_log();
  REQUIRE_FALSE(log.empty());
  CHECK(log.back().find("step 1 FAILED: \"when\" did not hold within 30 s (cpu at step 40") != std::string::npos);
}

TEST_CASE("the runner: a new model in the same step as a \"set\" starts with the settings set") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"set": {"batch": 64, "lr": 0.01, "unfused": true}, "model": {"dataset": "spiral"}}]})",
                                        "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig cfg;  // batch 128, lr 1e-3, fused: what the view shows before the step
  runner.update(0, view_of(cfg, {run_of("gpu", cfg, 5)}), host);
  REQUIRE(host.resets.size() == 1);
  CHECK(host.resets[0].dataset == "spiral");
  CHECK(host.resets[0].batch == 64);
  CHECK(host.resets[0].lr == doctest::Approx(0.01f));
  CHECK(host.resets[0].execution.unfused);
}

TEST_CASE("the runner: a teaching toggle counts as applied only once the trainer runs it") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"set": {"unfused": true}},
      {"when": {"both": {"steps_since_change": 2}, "applied": true}},
      {"quit": true}]})",
                                        "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig fused, unfused;
  unfused.execution.unfused = true;
  runner.update(0, view_of(fused, {run_of("gpu", fused, 50)}), host);
  REQUIRE(host.posted.size() == 1);
  // The settings say unfused; the GPU's trainer still runs the fused epilogue, 50 steps of it: they do not count.
  runner.update(1, view_of(unfused, {run_of("gpu", fused, 50)}), host);
  CHECK_FALSE(runner.finished());
  core::BackendRun running = run_of("gpu", unfused, 2);
  running.running.execution.unfused = true;
  runner.update(2, view_of(unfused, {running}), host);
  CHECK(runner.finished());
  CHECK(ui::running_difference(run_of("gpu", fused, 1), ui::settings_of(unfused)) ==
        "execution fused, not unfused");
}

TEST_CASE("the runner: a sweep is started and waited for; a finished sweep from before does not count") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"do": "sweep", "view": {"tab": "sweep"}},
      {"when": {"sweep_done": true}, "timeout": 600},
      {"quit": true}]})",
                                        "l.json");
  ui::LessonRunner runner(l);
  FakeHost host;
  core::TrainConfig cfg;
  auto view = view_of(cfg, {run_of("cpu", cfg, 40)});
  view.sweep_status = "done";  // an earlier sweep's
  runner.update(0, view, host);
  CHECK(host.sweeps == 1);
  REQUIRE(host.views.size() == 1);
  CHECK(host.views[0].tab == "sweep");
  runner.update(1, view, host);  // the request not yet seen running: the old "done" does not end the wait
  CHECK_FALSE(runner.finished());
  view.sweep_busy = true;
  view.sweep_status = "measuring";
  runner.update(2, view, host);
  CHECK_FALSE(runner.finished());
  view.sweep_busy = false;
  view.sweep_status = "done";
  runner.update(3, view, host);
  CHECK(runner.finished());
  CHECK(runner.exit_code() == 0);
  CHECK_THROWS_WITH_AS(ui::parse_lesson(R"({"title": "t", "steps": [{"when": {"sweep_done": 1}}]})", "l.json"),
                       doctest::Contains("sweep_done"), core::Error);
}

TEST_CASE("the runner: expect checks what the trainers run, not what the controls show") {
  const std::string text = R"({"title": "t", "steps": [
      {"expect": {"both": {"batch": 512, "optimizer": "sgd", "lr": 0.01, "precision": "fp16"}, "applied": true,
                  "figures": "current"}},
      {"quit": true}]})";
  core::TrainConfig want;
  want.batch = 512;
  want.optimizer = core::Optimizer::SGD;
  want.lr = 0.01f;
  want.precision = core::Precision::FP16;
  SUBCASE("both run it: as expected") {
    ui::LessonRunner runner(ui::parse_lesson(text, "l.json"));
    FakeHost host;
    runner.update(0, view_of(want, {run_of("gpu", want, 5), run_of("cpu", want, 5)}), host);
    runner.update(1, view_of(want, {run_of("gpu", want, 5), run_of("cpu", want, 5)}), host);
    CHECK(runner.exit_code() == 0);
  }
  SUBCASE("the record says fp16 but the GPU's trainer runs fp32") {
    ui::LessonRunner runner(ui::parse_lesson(text, "l.json"));
    FakeHost host;
    core::BackendRun gpu = run_of("gpu", want, 5);
    gpu.running.precision = core::Precision::FP32;
    runner.update(0, view_of(want, {gpu, run_of("cpu", want, 5)}), host);
    CHECK(runner.exit_code() == 1);
    const auto log = runner.take_log();
    REQUIRE_FALSE(log.empty());
    CHECK(log.back().find("gpu runs precision fp32, not fp16") != std::string::npos);
  }
  SUBCASE("kernel timings from before the last change") {
    ui::LessonRunner runner(ui::parse_lesson(text, "l.json"));
    FakeHost host;
    core::BackendRun cpu = run_of("cpu", want, 3);
    const core::StepPlan plan = core::build_step_plan(core::ModelShape({784, 256, 128, 10}), 512,
                                                      core::Activation::ReLU, core::Optimizer::SGD);
    for (long s = 0; s < 10; ++s) {
      core::StepRecord r;
      r.kernel_ms.assign(plan.entries.size(), 1.0);
      cpu.kernels.add(plan, r);
    }
    runner.update(0, view_of(want, {run_of("gpu", want, 5), cpu}), host);
    CHECK(runner.exit_code() == 1);
    CHECK(runner.take_log().back().find("cpu's kernel timings hold 10 steps, but only 3 ran") != std::string::npos);
  }
}

TEST_CASE("the runner: a screenshot is waited for; its failure fails the lesson") {
  const std::string text = R"({"title": "t", "steps": [{"screenshot": "a.png"}, {"caption": "next"}, {"quit": true}]})";
  core::TrainConfig cfg;
  const auto view = view_of(cfg, {run_of("cpu", cfg, 1)});
  {
    ui::LessonRunner runner(ui::parse_lesson(text, "l.json"));
    FakeHost host;
    runner.update(0, view, host);
    REQUIRE(host.shots == std::vector<std::string>{"a.png"});
    runner.update(1, view, host);
    CHECK(runner.caption().empty());  // still waiting for the screenshot
    host.shot_result = "";
    runner.update(2, view, host);
    CHECK(runner.caption() == "next");
  }
  {
    ui::LessonRunner runner(ui::parse_lesson(text, "l.json"));
    FakeHost host;
    runner.update(0, view, host);
    host.shot_result = "cannot write a.png: No space left on device";
    runner.update(1, view, host);
    CHECK(runner.exit_code() == 1);
    CHECK(runner.take_log().back().find("No space left on device") != std::string::npos);
  }
}
