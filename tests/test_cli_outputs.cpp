// The output policy of issue 25 as a user meets it on the command line: outputs refused before any work (empty,
// colliding, protected), standard output that cannot be written (exit 1, not 0), a reader that goes away (EPIPE,
// not SIGPIPE's rc 141), a cache symlink whose target is never overwritten, and the peaks told honestly (not "cached"
// when they were not; a SIGINT during their measurement stops it and leaves the run's report complete).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.hpp"
#include "core/peaks.hpp"
#include "cpu/peak_probe.hpp"

namespace {

namespace fs = std::filesystem;
using test::check_bad_input;
using test::finish_cli;
using test::Result;
using test::run_cli;
using test::scratch_dir;
using test::slurp;
using test::start_cli;

// The smallest training run: a CPU spiral of 2 steps.
std::vector<std::string> tiny(std::vector<std::string> more = {}) {
  std::vector<std::string> args{"train", "--dataset", "spiral", "--spiral-points", "100", "--hidden",
                                "8",     "--epochs",  "1",      "--backend",       "cpu"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Standard output's line for a backend's epoch, so that a test can wait for it.
bool waits_for(const std::string& text, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (slurp(scratch_dir() / "stdout.txt").find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE(
    "outputs refused before any work: empty, colliding, protected; a bad --size; each one line, exit 2, at once") {
  const fs::path dir = scratch_dir() / "refused";
  fs::remove_all(dir);
  fs::create_directories(dir / "sd");
  const auto start = std::chrono::steady_clock::now();
  // Before the fix an empty path meant "none" and exit 0.
  for (const char* option : {"--report", "--trace", "--screenshot", "--csv", "--data"})
    check_bad_input(tiny({option, ""}), std::string(option) + ": the value is empty");
  check_bad_input({"dashboard", "--script", ""}, "--script: the value is empty");
  check_bad_input({"sweep", "--report", ""}, "--report: the value is empty");
  // Before the fix: three "written" lines and only the report kept; steps.csv turned into the report.
  const std::string same = (dir / "same.json").string();
  check_bad_input(tiny({"--report", same, "--trace", same}), "--trace " + same + ": the same file as --report");
  check_bad_input(tiny({"--report", same, "--screenshot", same}), "the same file as --report " + same);
  check_bad_input(tiny({"--report", (dir / "sd" / "steps.csv").string(), "--csv", (dir / "sd").string()}),
                  "--csv (steps.csv)");
  check_bad_input({"sweep", "--report", (dir / "sd" / "sweep.csv").string(), "--csv", (dir / "sd").string()},
                  "the same file as --report");
  // A write-protected report was replaced.
  { std::ofstream(dir / "protected.json") << "keep"; }
  fs::permissions(dir / "protected.json", fs::perms::owner_read);
  check_bad_input(tiny({"--report", (dir / "protected.json").string()}), "write-protected");
  CHECK(slurp(dir / "protected.json") == "keep");
  check_bad_input(tiny({"--size", "12x9"}), "--size 12x9");  // ignored without --screenshot before the fix
  check_bad_input({"dashboard", "--screenshot", (dir / "s.png").string()}, "--frames");
  check_bad_input(tiny({"--lr", "0.1", "--lr", "0.2"}), "--lr: given 2 times");
  check_bad_input(tiny({"--lr", "10.0000001"}), "--lr 10.0000001:");           // not "--lr 10: ... <= 10"
  check_bad_input(tiny({"--lr", "1e-50"}), "--lr 1e-50: too small");           // not "--lr 0"
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));  // 22 refusals
}

TEST_CASE("standard output that cannot be written fails the command: exit 1 and a message, not 0") {
  test::CacheHome home("full_stdout");
  // A cached CPU entry, so that `peaks` only prints (no measuring).
  core::DevicePeaks cpu;
  cpu.backend = "cpu";
  cpu.key = cpu::cpu_peaks_key();
  cpu.device = "test CPU";
  cpu.measured_at = "2026-11-25 10:00:00";
  cpu.figures = {core::PeakFigure{"stream_copy_1t", "memory bandwidth", "GB/s", 10, {10, 10, 10, 10, 10}, "m", ""}};
  core::save_peaks(home.cache_file(), cpu);
  for (const auto& args :
       std::vector<std::vector<std::string>>{tiny(),
                                             {"devices"},
                                             {"peaks", "--backend", "cpu"},
                                             {"sweep", "--dataset", "spiral", "--spiral-points", "50", "--hidden", "8",
                                              "--backend", "cpu", "--batch", "4", "--steps", "1", "--warmup", "0"}}) {
    const Result r = run_cli(args, "/dev/full");
    INFO(test::joined(args) << "\nstderr: " << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find("trainscope: error: cannot write to standard output: No space left on device") !=
          std::string::npos);
  }
}

TEST_CASE("a reader that closes the --trace FIFO early: the summary, the report and the CSV are still written") {
  const fs::path dir = scratch_dir() / "fifo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path fifo = dir / "trace.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // `head -c 10 trace.json`: opened before train writes, reads 10 bytes, closes. The trace is far larger than the
  // pipe's 64 KiB, so train's write meets the closed end (before the fix: SIGPIPE, rc 141, nothing else written).
  // O_CLOEXEC: trainscope must not inherit the read end (it would keep the pipe open and its write would wait).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(reader >= 0);
  std::thread head([&] {
    char bytes[10];
    size_t got = 0;
    for (int i = 0; i < 1200 && got < sizeof bytes; ++i) {
      const ssize_t n = ::read(reader, bytes + got, sizeof bytes - got);
      if (n > 0)
        got += static_cast<size_t>(n);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::close(reader);
  });
  const Result r = run_cli({"train",
                            "--dataset",
                            "spiral",
                            "--spiral-points",
                            "1000",
                            "--hidden",
                            "8",
                            "--batch",
                            "8",
                            "--epochs",
                            "1",
                            "--backend",
                            "cpu",
                            "--trace",
                            fifo.string(),
                            "--trace-steps",
                            "300",
                            "--report",
                            (dir / "r.json").string(),
                            "--csv",
                            (dir / "csv").string()});
  head.join();
  INFO("stderr: " << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("cannot write the trace " + fifo.string() + ": the program reading it closed it early") !=
        std::string::npos);
  CHECK(r.out.find("step (total)") != std::string::npos);  // the summary
  CHECK(nlohmann::json::parse(slurp(dir / "r.json"))["interrupted"] == false);
  CHECK(fs::is_regular_file(dir / "csv" / "steps.csv"));
}

TEST_CASE("train --report: a cache symlink's target stays; peaks not cached are not called cached; SIGINT stops") {
  // peaks.json a symlink to a teacher's notes: not read (the peaks are measured), not written through (before the
  // fix `trainscope peaks` replaced notes.txt with the peaks JSON), and the run says so instead of "and cached".
  // (A cache that is a directory, read-only or another user's: test_core_peaks, test_core_output_policy.)
  test::CacheHome home("uncacheable");
  const fs::path notes = home.path / "notes.txt";
  { std::ofstream(notes) << "a teacher's notes"; }
  fs::create_directories(home.cache_file().parent_path());
  fs::create_symlink(notes, home.cache_file());
  const fs::path report = scratch_dir() / "peaks_report.json";
  Result r = run_cli(tiny({"--report", report.string()}));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(slurp(notes) == "a teacher's notes");
  CHECK(fs::is_symlink(home.cache_file()));
  CHECK(r.out.find("and cached") == std::string::npos);  // the old, wrong line
  CHECK(r.out.find("but not cached (cannot write the peaks cache " + home.cache_file().string() +
                   ": it is a symlink") != std::string::npos);
  // `peaks` likewise: its header said "cached in ..." and only stderr said otherwise (issue 34, item 10).
  r = run_cli({"peaks", "--backend", "cpu", "--stream-mib", "16"});
  INFO("peaks stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("cached in") == std::string::npos);
  CHECK(r.out.find("CPU: measured, but not cached (cannot write the peaks cache " + home.cache_file().string() +
                   ": it is a symlink") != std::string::npos);
  CHECK(slurp(notes) == "a teacher's notes");

  // SIGINT after the training, during the measurement: it stops, the run's report is complete (not "interrupted").
  fs::remove(report);
  const auto cli = start_cli(tiny({"--report", report.string()}));
  const bool measuring = waits_for("peaks: measuring", 60);
  ::kill(static_cast<pid_t>(cli->id()), SIGINT);
  r = finish_cli(cli);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(measuring);
  CHECK(r.code == 130);
  const nlohmann::json j = nlohmann::json::parse(slurp(report));
  CHECK(j["interrupted"] == false);  // before the fix: true, and the measurement went on to its end
  CHECK(r.out.find("not measured (measuring stopped by the user") != std::string::npos);
}
