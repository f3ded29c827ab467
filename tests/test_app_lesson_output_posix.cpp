// Where a lesson's pictures go, in the cases only POSIX can make: a symlink as a screenshot's target is refused, and
// without --output the pictures folder comes from XDG_PICTURES_DIR (a Windows build lists this file as a disabled
// test with that reason; the other output-folder checks, test_app_lesson_pacing.cpp, run there too).
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ui/lesson.hpp"

namespace fs = std::filesystem;

TEST_CASE("a picture never replaces a link; without --output it goes to the pictures folder, never the current one") {
  const fs::path dir = fs::temp_directory_path() / ("trainscope_test_lesson_out_posix_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "target.txt") << "a file the link points at";
  fs::create_symlink(dir / "target.txt", dir / "a.png");
  CHECK(ui::lesson_screenshot_target_problem(dir / "a.png").find("is a symlink") != std::string::npos);
  CHECK(fs::is_symlink(dir / "a.png"));
  setenv("XDG_PICTURES_DIR", (dir / "Pictures").c_str(), 1);
  CHECK(ui::default_lesson_output("assets/lessons/batch-size.json") == dir / "Pictures" / "trainscope" / "batch-size");
  unsetenv("XDG_PICTURES_DIR");
  fs::remove_all(dir);
}
