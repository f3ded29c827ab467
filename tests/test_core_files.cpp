// core/files: atomic outputs (regular files replaced by rename, devices and FIFOs written in place, symlinks kept,
// a failed write leaves the old file), the output path pre-check, and the capped regular-file reader (FIFOs,
// devices and directories refused without blocking). Device nodes are made with mknod in a scratch folder where
// that is allowed (root), so that no test ever writes to the machine's own /dev.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/files.hpp"
#include "file_test_util.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return test::scratch("trainscope_test_files", name); }
using test::put;
using test::slurp;

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

// The core::Error thrown by f, or a failed check when none is.
template <typename F>
core::Error error_of(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    return e;
  }
  FAIL("expected a core::Error");
  return core::Error(core::ErrorKind::Internal, "");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A character device like /dev/null (1,3) or /dev/full (1,7) at `path`: mknod in the scratch folder when allowed,
// else the machine's own node (then this process is not root, and the old code's rename into /dev failed anyway).
fs::path char_device(const fs::path& path, unsigned minor, const char* fallback) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0) return path;
  return fallback;
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Lowers the largest file this process may write (RLIMIT_FSIZE) while alive: writes beyond it fail with EFBIG,
// like a full disk, without filling one.
struct FileSizeLimit {
  rlimit old{};
  explicit FileSizeLimit(rlim_t bytes) {
    ::signal(SIGXFSZ, SIG_IGN);  // else the kernel ends the process instead of failing the write
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit lower = old;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~FileSizeLimit() { ::setrlimit(RLIMIT_FSIZE, &old); }
};

}  // namespace

TEST_CASE("write_file_atomically: a new file, then a replacement that keeps the old permissions") {
  const fs::path dir = scratch("regular");
  const fs::path file = dir / "report.json";
  core::write_file_atomically(file.string(), "first\n", "the report");
  CHECK(slurp(file) == "first\n");
  ::chmod(file.c_str(), 0600);
  core::write_file_atomically(file.string(), "second\n", "the report");
  CHECK(slurp(file) == "second\n");
  CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(entries(dir) == 1);  // no temporary file left
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically: a failed write (file too large / full disk) leaves the old file as it was") {
  const fs::path dir = scratch("full");
  const fs::path file = dir / "shot.png";
  put(file, "the previous good file");
  const std::string big(256 * 1024, 'x');
  core::Error e = error_of([&] {
    FileSizeLimit limit(64 * 1024);
    core::write_file_atomically(file.string(), big, "the screenshot");
  });
  CHECK(e.kind() == core::ErrorKind::Io);
  CHECK(contains(e.what(), file.string()));
  CHECK(contains(e.what(), "File too large"));
  CHECK(slurp(file) == "the previous good file");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("OutputFile: without commit() the target is untouched and no temporary file stays") {
  const fs::path dir = scratch("uncommitted");
  const fs::path file = dir / "trace.json";
  put(file, "old");
  {
    core::OutputFile out(file.string(), "the trace");
    out.write("half of a new fi");
    CHECK(entries(dir) == 2);  // the target and the temporary file beside it
  }
  CHECK(slurp(file) == "old");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically: a symlink is kept and its target replaced (chains, relative, dangling)") {
  const fs::path dir = scratch("symlink");
  fs::create_directories(dir / "real");
  put(dir / "real" / "r.json", "old");
  fs::create_symlink("real/r.json", dir / "link1");  // relative
  fs::create_symlink(dir / "link1", dir / "link2");  // a chain, absolute
  core::write_file_atomically((dir / "link2").string(), "new", "the report");
  CHECK(fs::is_symlink(dir / "link1"));
  CHECK(fs::is_symlink(dir / "link2"));
  CHECK(slurp(dir / "real" / "r.json") == "new");
  CHECK(entries(dir / "real") == 1);

  fs::create_symlink("real/not-yet.json", dir / "dangling");
  core::write_file_atomically((dir / "dangling").string(), "created", "the report");
  CHECK(fs::is_symlink(dir / "dangling"));
  CHECK(slurp(dir / "real" / "not-yet.json") == "created");

  fs::create_symlink(dir / "loop_b", dir / "loop_a");
  fs::create_symlink(dir / "loop_a", dir / "loop_b");
  core::Error e = error_of([&] { core::write_file_atomically((dir / "loop_a").string(), "x", "the report"); });
  CHECK(contains(e.what(), "symlink loop"));
  CHECK(fs::is_symlink(dir / "loop_a"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically: character devices are written in place, never replaced") {
  const fs::path dir = scratch("devices");
  const fs::path null = char_device(dir / "null", 3, "/dev/null");
  const fs::path full = char_device(dir / "full", 7, "/dev/full");
  INFO("device nodes: " << null << ", " << full);
  core::write_file_atomically(null.string(), "into the void", "the report");
  CHECK(is_char_device(null));
  core::Error e = error_of([&] { core::write_file_atomically(full.string(), "{}", "the report"); });
  CHECK(e.kind() == core::ErrorKind::Io);
  CHECK(contains(e.what(), "No space left on device"));
  CHECK(is_char_device(full));  // before the fix, root's rename replaced it with a regular file and "succeeded"
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically: a FIFO is written in place; without a reader it fails at once") {
  const fs::path dir = scratch("fifo");
  const fs::path fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  core::Error e = error_of([&] { core::write_file_atomically(fifo.string(), "nobody listens", "the report"); });
  CHECK(contains(e.what(), "no program is reading"));

  // A reader: open() with O_NONBLOCK succeeds without a writer, then the reads wait for data.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  core::write_file_atomically(fifo.string(), "through the pipe", "the report");
  char buffer[64] = {};
  const ssize_t n = ::read(reader, buffer, sizeof buffer - 1);
  ::close(reader);
  CHECK(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0) == "through the pipe");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically: '-' is standard output; directories and missing folders are refused") {
  const fs::path dir = scratch("stdout");
  const fs::path captured = dir / "stdout.txt";
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(file, STDOUT_FILENO);
  ::close(file);
  core::write_file_atomically("-", "to stdout\n", "the report");
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  CHECK(slurp(captured) == "to stdout\n");

  CHECK(contains(error_of([&] { core::write_file_atomically(dir.string(), "x", "the report"); }).what(),
                 "is a directory"));
  CHECK(contains(error_of([&] { core::write_file_atomically((dir / "no" / "r.json").string(), "x", "the report"); })
                     .what(),
                 (dir / "no").string()));
  CHECK(contains(error_of([&] { core::write_file_atomically("", "x", "the report"); }).what(), "empty"));
  fs::remove_all(dir);
}

TEST_CASE("check_output_path: refuses what cannot be written, before any work, and leaves nothing behind") {
  const fs::path dir = scratch("check");
  auto refused = [](const std::string& path) {
    const core::Error e = error_of([&] { core::check_output_path(path, "--report"); });
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    CHECK(contains(e.what(), "--report " + path + ": "));
    return std::string(e.what());
  };
  CHECK(contains(refused("/proc/version"), "cannot create files in the directory /proc"));
  CHECK(contains(refused(dir.string()), "is a directory"));
  CHECK(contains(refused((dir / "missing" / "r.json").string()), "does not exist"));
  CHECK(contains(refused(""), "empty"));
  fs::create_symlink(dir / "b", dir / "a");
  fs::create_symlink(dir / "a", dir / "b");
  CHECK(contains(refused((dir / "a").string()), "symlink loop"));
  put(dir / "plain", "x");
  CHECK(contains(refused((dir / "plain" / "r.json").string()), "not a directory"));
  // A name of 255 bytes (the usual limit): legal, but its temporary name beside it is not (issue 34: it said
  // "cannot create files in the directory ."). 200 bytes leave room.
  CHECK(contains(refused((dir / std::string(255, 'n')).string()),
                 ": the name (255 characters) is too long for this file system: the file is written through a "
                 "temporary one beside it, named after it ("));
  CHECK(contains(refused((dir / std::string(255, 'n')).string()), "characters); choose a shorter name"));
  CHECK_NOTHROW(core::check_output_path((dir / std::string(200, 'n')).string(), "--report"));

  CHECK_NOTHROW(core::check_output_path((dir / "new.json").string(), "--report"));
  CHECK_NOTHROW(core::check_output_path((dir / "plain").string(), "--report"));
  CHECK_NOTHROW(core::check_output_path("-", "--report"));
  CHECK_NOTHROW(core::check_output_path(char_device(dir / "null", 3, "/dev/null").string(), "--report"));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_NOTHROW(core::check_output_path((dir / "fifo").string(), "--report"));  // not opened: no reader needed now
  CHECK_FALSE(fs::exists(dir / "new.json"));
  const size_t expected = 4 + (fs::exists(dir / "null") ? 1 : 0);  // a, b, plain, fifo, (null); no probe file left
  CHECK(entries(dir) == expected);
  fs::remove_all(dir);
}

TEST_CASE("read_regular_file: reads regular files up to the cap, refuses the rest without blocking") {
  const fs::path dir = scratch("read");
  put(dir / "settings.json", "{\"font_size\": 20}");
  CHECK(core::read_regular_file((dir / "settings.json").string(), 1024, "settings file") == "{\"font_size\": 20}");
  fs::create_symlink(dir / "settings.json", dir / "link.json");
  CHECK(core::read_regular_file((dir / "link.json").string(), 1024, "settings file").size() == 17);

  auto refused = [](const fs::path& path, size_t cap = core::kMaxSmallFileBytes) {
    const core::Error e = error_of([&] { core::read_regular_file(path.string(), cap, "settings file"); });
    CHECK(e.kind() == core::ErrorKind::Io);
    CHECK(contains(e.what(), "settings file " + path.string() + ": "));
    return std::string(e.what());
  };
  CHECK(contains(refused(dir / "settings.json", 10), "17 bytes, larger than the 10 bytes"));
  CHECK(contains(refused(dir / "missing.json"), "does not exist"));
  CHECK(contains(refused(dir), "is a directory"));
  fs::create_symlink("/dev/zero", dir / "zero.json");  // before the fix, memory grew without bound
  CHECK(contains(refused(dir / "zero.json"), "is a character device"));
  CHECK(contains(refused("/proc/self/status", 16), "larger than the 16 bytes"));  // /proc says size 0: capped while read

  // A FIFO without a writer: before the fix, open() blocked for ever. Run it on a thread so that a regression
  // fails the test instead of hanging it (a writer is then opened to release the thread).
  const fs::path fifo = dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pending = std::async(std::launch::async, [&] { return refused(fifo); });
  if (pending.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    FAIL_CHECK("read_regular_file blocked on a FIFO");
    // A writer that comes and goes releases the blocked open(); its read() then sees the end of the file.
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    pending.wait();
  }
  CHECK(contains(pending.get(), "is a FIFO, not a regular file"));
  fs::remove_all(dir);
}
