// The platform layer (src/platform/) against what the standard library and the test itself know independently:
// file types and identities, exclusive creation, atomic replacement, locks, the child process runner, thread CPU
// time, the user folders' rules, Ctrl+C/termination requests and the calls made when a thread ends. Written without
// OS headers, so that the same test runs on every system the layer has an implementation for.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "platform/files.hpp"
#include "platform/folders.hpp"
#include "platform/process.hpp"
#include "platform/signals.hpp"
#include "platform/system.hpp"
#include "platform/threads.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const char* name) {
  const fs::path dir = fs::temp_directory_path() / ("trainscope-platform-" + std::to_string(platform::process_id()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove_all(p);
  return p;
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("file_status tells regular files, directories and missing paths apart, with sizes and identities") {
  const fs::path file = scratch("status.txt"), other = scratch("status-other.txt"), dir = scratch("status-dir");
  put(file, "12345");
  put(other, "x");
  fs::create_directory(dir);
  platform::FileStatus st, st2, dst;
  REQUIRE(platform::file_status(file.string(), true, st) == 0);
  CHECK(st.type == platform::FileType::Regular);
  CHECK(st.size == 5);
  CHECK(st.owned_by_me);
  CHECK(st.owner_readable());
  REQUIRE(platform::file_status(other.string(), true, st2) == 0);
  CHECK((st.device != st2.device || st.inode != st2.inode));  // two files, two identities
  REQUIRE(platform::file_status(file.string(), false, st2) == 0);
  CHECK((st.device == st2.device && st.inode == st2.inode));  // the same file twice: one identity
  REQUIRE(platform::file_status(dir.string(), true, dst) == 0);
  CHECK(dst.type == platform::FileType::Directory);
  CHECK(platform::file_status(scratch("missing").string(), true, st) == ENOENT);
  CHECK(platform::check_readable_directory(dir.string()) == 0);
  CHECK(platform::check_readable_directory(file.string()) != 0);
}

TEST_CASE("create_new is exclusive; write, sync and rename_replace replace the target whole") {
  const fs::path target = scratch("target.txt"), temp = scratch("temp.txt");
  put(target, "old contents");
  platform::File f;
  REQUIRE(platform::File::create_new(temp.string(), f) == 0);
  platform::File again;
  CHECK(platform::File::create_new(temp.string(), again) == EEXIST);
  CHECK_FALSE(again.is_open());
  const std::string text = "new";
  size_t written = 0;
  REQUIRE(f.write_some(text.data(), text.size(), written) == 0);
  CHECK(written == text.size());
  CHECK(f.sync() == 0);
  CHECK(f.close() == 0);
  CHECK(slurp(target) == "old contents");  // nothing reaches the target before the rename
  REQUIRE(platform::rename_replace(temp.string(), target.string()) == 0);
  CHECK(slurp(target) == "new");
  CHECK_FALSE(fs::exists(temp));
  CHECK(platform::remove_file(target.string()) == 0);
  CHECK_FALSE(fs::exists(target));
  CHECK(platform::remove_file(target.string()) == ENOENT);
}

TEST_CASE("open_for_reading reads what was written, to the end") {
  const fs::path p = scratch("read.txt");
  std::string text(100000, 'a');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  put(p, text);
  platform::File f;
  REQUIRE(platform::File::open_for_reading(p.string(), true, f) == 0);
  std::string got;
  char buffer[4096];
  for (size_t n = 1; n > 0;) {
    REQUIRE(f.read_some(buffer, sizeof buffer, n) == 0);
    got.append(buffer, n);
  }
  CHECK(got == text);
  CHECK(platform::File::open_for_reading(scratch("absent").string(), false, f) == ENOENT);
}

TEST_CASE("a lock held through one open file is seen as held through another") {
  const fs::path p = scratch("cache.lock");
  platform::File first, second;
  REQUIRE(platform::File::open_lock_file(p.string(), first) == 0);
  REQUIRE(platform::File::open_lock_file(p.string(), second) == 0);
  REQUIRE(first.try_lock() == platform::LockResult::Locked);
  CHECK(second.try_lock() == platform::LockResult::Held);
  first.close();  // closing releases the lock
  CHECK(second.try_lock() == platform::LockResult::Locked);
}

TEST_CASE("run_reading_lines passes arguments and environment and returns the exit code") {
  const fs::path self = platform::executable_path();
  REQUIRE_FALSE(self.empty());
  CHECK(fs::exists(self));
  CHECK(platform::is_executable(self));
  // The child (tests/platform_child.cpp) prints its arguments and TRAINSCOPE_PLATFORM_CHILD, one per line, and exits
  // with 3.
  const fs::path child = TRAINSCOPE_PLATFORM_CHILD;
  std::vector<std::string> env = platform::environment();
  CHECK_FALSE(env.empty());
  env.push_back("TRAINSCOPE_PLATFORM_CHILD=hello world");
  std::vector<std::string> lines;
  const int code = platform::run_reading_lines(child, {child.string(), "one", "two words", "quote\"d\\"}, env,
                                               [&](const std::string& line) {
                                                 lines.push_back(line);
                                                 return true;
                                               });
  CHECK(code == 3);
  CHECK(lines == std::vector<std::string>{"one", "two words", "quote\"d\\", "hello world"});
}

TEST_CASE("thread_cpu_seconds grows with work on this thread") {
  const double before = platform::thread_cpu_seconds();
  volatile double x = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const double used = platform::thread_cpu_seconds() - before;
  CHECK(used > 0.01);
  CHECK(used < 10);
}

TEST_CASE("the machine's figures are figures or an honest unknown") {
  const double load = platform::load_average();
  CHECK((load == -1 || load >= 0));
  CHECK(platform::physical_memory_bytes() > 0);
  const double available = platform::available_memory_bytes();
  CHECK((available == -1 || (available > 0 && available <= static_cast<double>(platform::physical_memory_bytes()))));
  const std::tm tm = platform::local_time(0);
  CHECK((tm.tm_year == 69 || tm.tm_year == 70));  // 1970-01-01 UTC is 1969 or 1970 in any time zone
}

TEST_CASE("a Ctrl+C request (SIGINT) reaches InterruptSignals::wait, not the default handler") {
  platform::InterruptSignals signals;
  CHECK(signals.wait(10) == 0);
  std::raise(SIGINT);
  int got = 0;
  for (int i = 0; i < 50 && got == 0; ++i) got = signals.wait(100);
  CHECK(got == SIGINT);
  CHECK(signals.wait(10) == 0);  // taken once
}

TEST_CASE("at_thread_exit calls its functions when the thread ends, the last registered first, each once") {
  static std::vector<int> calls;  // written by the thread, read after join
  static int first = 1, second = 2;
  calls.clear();
  size_t seen_before_end = 99;
  std::thread t([&seen_before_end] {
    const auto note = [](void* p) { calls.push_back(*static_cast<int*>(p)); };
    platform::at_thread_exit(note, &first);
    platform::at_thread_exit(note, &second);
    seen_before_end = calls.size();
  });
  t.join();
  CHECK(seen_before_end == 0);
  CHECK(calls == std::vector<int>{2, 1});
}
