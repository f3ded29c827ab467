// core/files' output policy (issue 25): what trainscope must never replace — a file a cache symlink points to,
// another user's file, an unreadable or write-protected one — the all-or-none group write of train --csv, the
// refusal of two outputs that are one file, and a reader that goes away (EPIPE, not SIGPIPE). Each case failed
// before the policy: the file behind the link was overwritten, the protected file replaced, the CSV files mixed,
// the colliding outputs all "written".
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "file_test_util.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return test::scratch("trainscope_test_policy", name); }
using test::put;
using test::slurp;

// The message of the core::Error that f throws ("" and a failed check when none is).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    return e.what();
  }
  FAIL_CHECK("expected a core::Error");
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a cache is never written or read through a symlink: the file it points to stays as it was") {
  const fs::path dir = scratch("cache_link");
  put(dir / "notes.txt", "a teacher's notes");
  fs::create_symlink(dir / "notes.txt", dir / "peaks.json");
  const std::string why = error_of([&] {
    core::write_file_atomically((dir / "peaks.json").string(), "{}", "the peaks cache", core::OutputKind::Cache);
  });
  CHECK(contains(why, "cannot write the peaks cache " + (dir / "peaks.json").string() + ": it is a symlink"));
  CHECK(slurp(dir / "notes.txt") == "a teacher's notes");
  CHECK(fs::is_symlink(dir / "peaks.json"));
  CHECK(contains(error_of([&] {
                   core::read_regular_file((dir / "peaks.json").string(), 1024, "peaks cache", core::OutputKind::Cache);
                 }),
                 "is a symlink"));
  // A dangling link is refused too (the old code created the file it named, in another folder).
  fs::create_symlink(dir / "elsewhere" / "x.bin", dir / "pipelines.bin");
  CHECK(contains(error_of([&] {
                   core::write_file_atomically((dir / "pipelines.bin").string(), "x", "the pipeline cache",
                                               core::OutputKind::Cache);
                 }),
                 "it is a symlink"));
  CHECK_FALSE(fs::exists(dir / "elsewhere"));
  // A file the user names keeps the documented behaviour: its link is followed.
  core::write_file_atomically((dir / "peaks.json").string(), "new", "the report");
  CHECK(slurp(dir / "notes.txt") == "new");
  fs::remove_all(dir);
}

TEST_CASE("another user's, an unreadable and a write-protected file are refused, never replaced") {
  const fs::path dir = scratch("protected");
  auto refused = [&](const fs::path& file, const std::string& why) {
    const std::string old = slurp(file);
    CHECK(contains(error_of([&] { core::write_file_atomically(file.string(), "new", "the report"); }), why));
    CHECK(contains(error_of([&] { core::check_output_path(file.string(), "--report"); }), why));
    CHECK(slurp(file) == old);
    CHECK(fs::exists(file));
  };
  put(dir / "protected.json", "keep me");
  fs::permissions(dir / "protected.json", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  refused(dir / "protected.json", "it is write-protected (mode 0444)");
  put(dir / "secret.json", "unreadable");
  fs::permissions(dir / "secret.json", fs::perms::owner_write);
  {
    const std::string why = error_of([&] { core::write_file_atomically((dir / "secret.json").string(), "x", "r"); });
    CHECK(contains(why, "it cannot be read (mode 0200)"));
    fs::permissions(dir / "secret.json", fs::perms::owner_read | fs::perms::owner_write);
    CHECK(slurp(dir / "secret.json") == "unreadable");
  }
  put(dir / "theirs.json", "another user's");
  if (::chown((dir / "theirs.json").c_str(), 4242, 4242) == 0) {  // only root may give a file away
    refused(dir / "theirs.json", "it belongs to another user (uid 4242)");
    // A cache of theirs too (a shared cache folder): not replaced, their entries not lost.
    CHECK(contains(error_of([&] {
                     core::write_file_atomically((dir / "theirs.json").string(), "{}", "the peaks cache",
                                                 core::OutputKind::Cache);
                   }),
                   "belongs to another user"));
    CHECK(slurp(dir / "theirs.json") == "another user's");
  } else {
    MESSAGE("not root: the other-user case needs chown, skipped");
  }
  fs::remove_all(dir);
}

TEST_CASE("write_files_atomically: a full disk part-way leaves every old file, never old and new mixed") {
  const fs::path dir = scratch("group");
  for (const char* name : {"steps.csv", "kernels.csv", "peaks.csv"}) put(dir / name, std::string("old ") + name);
  const std::string small = "new small\n", big(256 * 1024, 'x');
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit lower = old;
  lower.rlim_cur = 64 * 1024;  // writes beyond 64 KiB fail with EFBIG, like a full disk
  ::setrlimit(RLIMIT_FSIZE, &lower);
  const std::string why = error_of([&] {
    core::write_files_atomically({{(dir / "steps.csv").string(), small, "the CSV file steps.csv"},
                                  {(dir / "kernels.csv").string(), small, "the CSV file kernels.csv"},
                                  {(dir / "peaks.csv").string(), big, "the CSV file peaks.csv"}});
  });
  ::setrlimit(RLIMIT_FSIZE, &old);
  CHECK(contains(why, "peaks.csv"));
  // Before the fix steps.csv and kernels.csv were already new when peaks.csv failed.
  for (const char* name : {"steps.csv", "kernels.csv", "peaks.csv"})
    CHECK(slurp(dir / name) == std::string("old ") + name);
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 3);  // no temporary file left
  core::write_files_atomically(
      {{(dir / "steps.csv").string(), small, "a"}, {(dir / "peaks.csv").string(), small, "b"}});
  CHECK(slurp(dir / "steps.csv") == small);
  CHECK(slurp(dir / "peaks.csv") == small);
  fs::remove_all(dir);
}

TEST_CASE("check_distinct_outputs: one file under two names is refused; distinct files and /dev/null pass") {
  const fs::path dir = scratch("distinct");
  const std::string a = (dir / "a.json").string();
  auto refused = [](const std::vector<core::NamedOutput>& outputs) {
    return error_of([&] { core::check_distinct_outputs(outputs); });
  };
  CHECK(refused({{"--report", a}, {"--trace", a}}) ==
        "--trace " + a + ": the same file as --report " + a + "; give each output a file of its own");
  fs::create_directories(dir / "sub");
  CHECK(contains(refused({{"--report", a}, {"--trace", (dir / "." / "sub" / ".." / "a.json").string()}}),
                 "the same file as --report"));  // not yet existing, spelled another way
  put(dir / "a.json", "x");
  fs::create_symlink(dir / "a.json", dir / "link.json");
  fs::create_hard_link(dir / "a.json", dir / "hard.json");
  CHECK(contains(refused({{"--report", a}, {"--screenshot", (dir / "link.json").string()}}), "the same file"));
  CHECK(contains(refused({{"--report", a}, {"--csv (steps.csv)", (dir / "hard.json").string()}}), "the same file"));
  CHECK(contains(refused({{"--report", "-"}, {"--trace", "-"}}), "--trace - (standard output)"));
  CHECK_NOTHROW(core::check_distinct_outputs(
      {{"--report", a}, {"--trace", (dir / "b.json").string()}, {"--screenshot", ""}, {"--csv", ""}}));
  CHECK_NOTHROW(core::check_distinct_outputs({{"--report", "/dev/null"}, {"--trace", "/dev/null"}}));
  // "-" is whatever standard output is: a file named as well is the same file.
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int file = ::open(a.c_str(), O_WRONLY);
  ::dup2(file, STDOUT_FILENO);
  ::close(file);
  const std::string why = refused({{"--report", "-"}, {"--trace", a}});
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  CHECK(contains(why, "the same file as --report - (standard output)"));
  fs::remove_all(dir);
}

TEST_CASE("a FIFO whose reader goes away is a write error (EPIPE), not a SIGPIPE that ends the program") {
  // main() ignores SIGPIPE; so does this test, as the program does.
  const auto old = ::signal(SIGPIPE, SIG_IGN);
  const fs::path dir = scratch("epipe");
  const fs::path fifo = dir / "trace.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  core::OutputFile out(fifo.string(), "the trace");
  out.write("first bytes");
  ::close(reader);  // `head -c 10 trace.json` is done
  const std::string why = error_of([&] { out.write(std::string(1 << 16, 'x')); });
  CHECK(contains(why, "cannot write the trace " + fifo.string() + ": the program reading it closed it early"));
  ::signal(SIGPIPE, old);
  fs::remove_all(dir);
}
