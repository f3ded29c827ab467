// Lessons the teacher paces and what they write (ui/lesson_runner.hpp, ui/lesson.hpp): "next" steps wait for the
// teacher's key and back() shows the caption before, a quit waits for the teacher; with autoplay they run at once;
// a steady condition waits for settled figures and never fails a lesson; screenshots go only to the output folder,
// replacing only a PNG (a link as the target and the pictures folder: test_app_lesson_output_posix.cpp). Runs on
// Windows too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lesson_test_util.hpp"
#include "platform/files.hpp"

using test::FakeHost;
using test::run_of;
using test::view_of;
namespace fs = std::filesystem;

TEST_CASE("the output folder: made when missing; a picture replaces only a PNG, never a folder or another file") {
  const fs::path dir =
      fs::temp_directory_path() / ("trainscope_test_lesson_out_" + std::to_string(platform::process_id()));
  fs::remove_all(dir);
  const ui::Lesson l =
      ui::parse_lesson(R"({"title": "t", "steps": [{"screenshot": "a.png"}, {"quit": true}]})", "l.json");
  CHECK_NOTHROW(ui::check_lesson_output(l, dir / "new" / "folder"));
  CHECK(fs::is_directory(dir / "new" / "folder"));
  std::ofstream(dir / "a.png") << "my notes, not a picture";
  CHECK_THROWS_WITH_AS(ui::check_lesson_output(l, dir), doctest::Contains("exists and is not a PNG"), core::Error);
  CHECK(ui::lesson_screenshot_target_problem(dir / "a.png").find("is not a PNG") != std::string::npos);
  std::ofstream(dir / "a.png", std::ios::binary | std::ios::trunc) << "\x89PNG\r\n\x1a\n and the rest";
  CHECK_NOTHROW(ui::check_lesson_output(l, dir));
  fs::remove(dir / "a.png");
  fs::create_directories(dir / "a.png");
  CHECK(ui::lesson_screenshot_target_problem(dir / "a.png").find("is a directory") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a teacher's lesson: next steps wait for the teacher, back shows the caption before, quit waits too") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"caption": "one", "notes": "say one"},
      {"next": true, "caption": "two", "set": {"batch": 64}},
      {"next": true, "caption": "three"},
      {"quit": true}]})",
                                        "l.json");
  CHECK(l.points() == 3);
  core::TrainConfig cfg;
  const auto view = view_of(cfg, {run_of("cpu", cfg, 5)});
  SUBCASE("paced") {
    ui::LessonRunner runner(l, ui::LessonOptions{false, {}});
    FakeHost host;
    runner.update(0, view, host);
    CHECK(runner.caption() == "one");
    CHECK(runner.hint() == "1/3 · Space: next");
    runner.update(60, view, host);  // however long it waits
    CHECK(host.posted.empty());
    runner.next();
    runner.update(61, view, host);
    CHECK(runner.caption() == "two");
    REQUIRE(host.posted.size() == 1);
    CHECK(runner.hint() == "2/3 · Space: next");
    runner.back();
    CHECK(runner.caption() == "one");
    CHECK(runner.hint() == "1/3 · earlier · Space: on");
    runner.next();  // forward to the current caption: the lesson does not move on
    runner.update(62, view, host);
    CHECK(runner.caption() == "two");
    runner.next();
    runner.update(63, view, host);
    CHECK(runner.caption() == "three");
    CHECK(runner.hint() == "3/3 · Space: end");
    CHECK_FALSE(runner.exit_code());  // the quit waits for the teacher
    runner.next();
    CHECK(runner.exit_code() == 0);
    const auto log = runner.take_log();
    CHECK(std::find(log.begin(), log.end(), "notes 1/3: say one") != log.end());
  }
  SUBCASE("autoplay") {
    ui::LessonRunner runner(l, ui::LessonOptions{true, "out"});
    FakeHost host;
    runner.update(0, view, host);
    runner.update(1, view, host);
    runner.update(2, view, host);
    runner.update(3, view, host);
    CHECK(runner.exit_code() == 0);
    CHECK(runner.hint().empty());
  }
}

TEST_CASE("a steady condition: enough steps, then figures that stay within their spread; it never fails a lesson") {
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"when": {"steady": {"steps": 10, "seconds": 2, "spread": 0.1}}, "timeout": 30},
      {"screenshot": "x.png"}]})",
                                        "l.json");
  core::TrainConfig cfg;
  auto view_at = [&](long steps, double gpu_rate, double cpu_rate) {
    core::BackendRun gpu = run_of("gpu", cfg, steps), cpu = run_of("cpu", cfg, steps);
    gpu.recent_samples_per_s = gpu_rate;
    cpu.recent_samples_per_s = cpu_rate;
    return view_of(cfg, {gpu, cpu});
  };
  {
    ui::LessonRunner runner(l, ui::LessonOptions{true, "out"});
    FakeHost host;
    runner.update(0, view_at(5, 1000, 5000), host);   // too few steps
    runner.update(3, view_at(12, 1000, 5000), host);  // enough steps: the span starts
    runner.update(4, view_at(13, 1300, 5000), host);  // the GPU's samples/s moved 30%
    runner.update(5.5, view_at(14, 1000, 5000), host);
    CHECK(host.shots.empty());
    for (double t = 6; t <= 8.5; t += 0.5) runner.update(t, view_at(15, 1000 + 10 * t, 5000), host);
    REQUIRE(host.shots == std::vector<std::string>{(fs::path("out") / "x.png").string()});
  }
  {  // figures that never settle: the lesson goes on after the timeout and says how far they moved
    ui::LessonRunner runner(l, ui::LessonOptions{true, {}});
    FakeHost host;
    for (double t = 0; t <= 31; t += 1)
      runner.update(t, view_at(20, t == static_cast<int>(t / 2) * 2 ? 1000 : 2000, 5000), host);
    CHECK(host.shots == std::vector<std::string>{"x.png"});
    CHECK_FALSE(runner.exit_code());
    const auto log = runner.take_log();
    CHECK(std::any_of(log.begin(), log.end(), [](const std::string& line) {
      return line.find("did not settle within 30 s (") != std::string::npos && line.find("moved") != std::string::npos;
    }));
  }
}

TEST_CASE("a steady condition after a new model: the run before it is never measured as the new one's") {
  // The attention lesson's CI failure: "model" posted a reset, and the next frame still showed the old run,
  // applied and steady for many steps; with no settling span (--steady 2,0) its figures were measured as the
  // new context's, and the picture after found the new run still building.
  const ui::Lesson l = ui::parse_lesson(R"({"title": "t", "steps": [
      {"model": {"context": 64}},
      {"when": {"steady": {"steps": 2, "seconds": 0, "spread": 0.1}}, "measure": "long"},
      {"screenshot": "x.png"}]})",
                                        "l.json");
  core::TrainConfig cfg;
  auto view_at = [&](long steps, long generation, double rate) {
    core::BackendRun gpu = run_of("gpu", cfg, steps, generation), cpu = run_of("cpu", cfg, steps, generation);
    gpu.recent_samples_per_s = rate, cpu.recent_samples_per_s = 10 * rate;
    return view_of(cfg, {gpu, cpu});
  };
  ui::LessonRunner runner(l, ui::LessonOptions{true, {}});
  FakeHost host;
  runner.update(0, view_at(100, 1, 500), host);
  REQUIRE(host.resets.size() == 1);
  runner.update(0.1, view_at(101, 1, 500), host);  // the old run, its figures steady: not the one meant
  runner.update(0.2, view_at(102, 1, 500), host);
  CHECK(host.shots.empty());
  runner.update(0.3, view_at(1, 2, 100), host);  // the new run, too few steps
  CHECK(host.shots.empty());
  runner.update(0.4, view_at(3, 2, 100), host);
  runner.update(0.5, view_at(4, 2, 100), host);
  REQUIRE(host.shots == std::vector<std::string>{"x.png"});
  const auto log = runner.take_log();
  CHECK(std::any_of(log.begin(), log.end(), [](const std::string& line) {
    return line.find("measured \"long\": cpu 1000 samples/s, gpu 100 samples/s") != std::string::npos;
  }));
}

TEST_CASE("after a new model, \"applied\" (a condition or an expectation) means the new run, not the one before") {
  // The old run still shows the settings the controls show, so only its generation tells it from the new one.
  core::TrainConfig cfg;
  auto view_at = [&](long steps, long generation) {
    return view_of(cfg, {run_of("gpu", cfg, steps, generation), run_of("cpu", cfg, steps, generation)});
  };
  SUBCASE("a condition waits for the new run") {
    ui::LessonRunner runner(ui::parse_lesson(R"({"title": "t", "steps": [
        {"model": {"context": 64}}, {"when": {"applied": true}}, {"screenshot": "x.png"}]})",
                                             "l.json"),
                            ui::LessonOptions{true, {}});
    FakeHost host;
    runner.update(0, view_at(100, 1), host);
    REQUIRE(host.resets.size() == 1);
    runner.update(0.1, view_at(101, 1), host);
    runner.update(0.2, view_at(102, 1), host);
    CHECK(host.shots.empty());
    runner.update(0.3, view_at(1, 2), host);
    CHECK(host.shots == std::vector<std::string>{"x.png"});
  }
  SUBCASE("an expectation names the run from before the reset") {
    ui::LessonRunner runner(ui::parse_lesson(R"({"title": "t", "steps": [
        {"model": {"context": 64}}, {"expect": {"applied": true}}, {"quit": true}]})",
                                             "l.json"),
                            ui::LessonOptions{true, {}});
    FakeHost host;
    runner.update(0, view_at(100, 1), host);
    runner.update(0.1, view_at(101, 1), host);
    CHECK(runner.exit_code() == 1);
    const auto log = runner.take_log();
    CHECK(std::any_of(log.begin(), log.end(), [](const std::string& line) {
      return line.find("gpu does not run the settings shown: the run from before the reset") != std::string::npos;
    }));
  }
}
