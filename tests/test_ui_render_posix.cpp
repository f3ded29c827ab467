// ui::write_png where only POSIX can make the case: a write that fails part-way (RLIMIT_FSIZE, like a full disk)
// leaves the previous screenshot, and a symlinked target keeps its link (a Windows build lists this file as a
// disabled test with that reason; the other PNG and frame checks, test_ui_render.cpp, run there too).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "file_test_util.hpp"
#include "ui/screenshot.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) { return test::scratch("trainscope-test-ui-posix", name); }

}  // namespace

TEST_CASE("write_png: a failed write (full disk, kill) leaves the previous screenshot; a symlink is kept") {
  // A large image with incompressible pixels, so the PNG is far above the lowered file size limit below.
  ui::Image img{512, 512, std::vector<uint8_t>(512 * 512 * 4)};
  uint32_t state = 12345;
  for (auto& byte : img.rgba) byte = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
  fs::path dir = temp_dir("atomic");
  const fs::path file = dir / "slide.png";
  { std::ofstream(file, std::ios::binary) << "the previous good PNG"; }
  std::string error;
  {
    // RLIMIT_FSIZE: writes past 64 KiB fail with EFBIG, like a full disk (SIGXFSZ ignored so the write fails).
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit lower = old;
    lower.rlim_cur = 64 * 1024;
    ::setrlimit(RLIMIT_FSIZE, &lower);
    error = ui::write_png(img, file.string());
    ::setrlimit(RLIMIT_FSIZE, &old);
  }
  CHECK(error.find("File too large") != std::string::npos);
  std::ifstream in(file, std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "the previous good PNG");  // before the fix: deleted
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  // Through a symlink: the link stays, the PNG lands in its target.
  fs::create_symlink("slide.png", dir / "latest.png");
  CHECK(ui::write_png(img, (dir / "latest.png").string()) == "");
  CHECK(fs::is_symlink(dir / "latest.png"));
  CHECK(fs::file_size(file) > 64 * 1024);
  fs::remove_all(dir);
}
