// core/memory_budget: the machine's available memory read from /proc/meminfo and the memory cgroups (v1 and v2,
// every level, page cache that can be reclaimed not counted as used), sizes as people write them, and the one-line
// refusal with the figures. The /proc and /sys files are fixtures in a scratch folder laid out as the real ones.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/memory_budget.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct FakeRoot {
  explicit FakeRoot(const std::string& name) {
    path = fs::temp_directory_path() / ("trainscope_test_budget_" + std::to_string(getpid()) + "_" + name);
    fs::remove_all(path);
  }
  ~FakeRoot() { fs::remove_all(path); }
  void put(const std::string& file, const std::string& text) const {
    fs::create_directories((path / file.substr(1)).parent_path());
    std::ofstream(path / file.substr(1)) << text;
  }
  fs::path path;
};

const char* kMeminfo = "MemTotal:       24683656 kB\nMemFree:         1000000 kB\nMemAvailable:   20971520 kB\n";

}  // namespace

TEST_CASE("host_memory: MemAvailable alone, then the tighter cgroup v2 limit of any level above the process") {
  FakeRoot root("v2");
  root.put("/proc/meminfo", kMeminfo);  // 20 GiB available
  root.put("/proc/self/cgroup", "0::/user.slice/session.scope\n");
  core::HostMemory h = core::host_memory(root.path.string());
  CHECK(h.available == doctest::Approx(20 * kGiB));
  CHECK(h.source == "MemAvailable in /proc/meminfo");

  // The session's own limit is "max"; its parent has 3 GiB with 1.5 GiB charged, of which 0.5 GiB is inactive page
  // cache that the kernel reclaims before it kills: 2 GiB left.
  root.put("/sys/fs/cgroup/user.slice/session.scope/memory.max", "max\n");
  root.put("/sys/fs/cgroup/user.slice/session.scope/memory.current", "100\n");
  root.put("/sys/fs/cgroup/user.slice/memory.max", std::to_string(3ull << 30) + "\n");
  root.put("/sys/fs/cgroup/user.slice/memory.current", std::to_string(3ull << 29) + "\n");
  root.put("/sys/fs/cgroup/user.slice/memory.stat", "anon 123\ninactive_file " + std::to_string(1ull << 29) + "\n");
  h = core::host_memory(root.path.string());
  CHECK(h.available == doctest::Approx(2 * kGiB));
  CHECK(h.source == "the memory cgroup /user.slice (limit 3.0 GiB, 1.0 GiB in use)");
}

TEST_CASE("host_memory: cgroup v1's memory controller; its 'no limit' (about 2^63) is no limit") {
  FakeRoot root("v1");
  root.put("/proc/meminfo", kMeminfo);
  root.put("/proc/self/cgroup", "5:devices:/\n4:memory:/process_api/abc\n0::/\n");
  root.put("/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "9223372036854771712\n");
  root.put("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes", std::to_string(3ull << 30) + "\n");
  root.put("/sys/fs/cgroup/memory/process_api/memory.usage_in_bytes", std::to_string(1ull << 30) + "\n");
  root.put("/sys/fs/cgroup/memory/process_api/memory.stat", "cache 5\ntotal_inactive_file 0\n");
  const core::HostMemory h = core::host_memory(root.path.string());
  CHECK(h.available == doctest::Approx(2 * kGiB));
  CHECK(h.source.find("/process_api (limit 3.0 GiB") != std::string::npos);
}

TEST_CASE("host_memory: nothing readable is no limit, not a refusal of everything") {
  FakeRoot root("none");
  root.put("/proc/version", "x");
  CHECK(std::isinf(core::host_memory(root.path.string()).available));
}

TEST_CASE("parse_memory_size: the sizes people write; anything else is not a size") {
  CHECK(core::parse_memory_size("3G") == 3 * kGiB);
  CHECK(core::parse_memory_size("3GiB") == 3 * kGiB);
  CHECK(core::parse_memory_size("3GB") == 3 * kGiB);
  CHECK(core::parse_memory_size("1.5g") == 1.5 * kGiB);
  CHECK(core::parse_memory_size("512M") == 512.0 * (1 << 20));
  CHECK(core::parse_memory_size("4096") == 4096);
  for (const char* bad : {"", "G", "3X", "-1G", "nan", "inf", "3 G", "1e999"}) {
    CAPTURE(bad);
    CHECK(core::parse_memory_size(bad) < 0);
  }
}

TEST_CASE("check_host_memory: one line with the need by part, what is available and from where, what to do") {
  core::MemoryNeed need;
  need.add("CPU trainer", 2 * kGiB).add("GPU trainer", 1.5 * kGiB).add("nothing", 0);
  CHECK(need.parts.size() == 2);
  core::HostMemory host{3 * kGiB, "the memory cgroup /x (limit 3.0 GiB, 0 MiB in use)"};
  try {
    core::check_host_memory(need, "--hidden/--batch: this run", "use smaller layers", host);
    FAIL("not refused");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    CHECK(std::string(e.what()) ==
          "--hidden/--batch: this run: needs 3.5 GiB of host memory (CPU trainer: 2.0 GiB, GPU trainer: 1.5 GiB), but "
          "2.8 GiB is available (the memory cgroup /x (limit 3.0 GiB, 0 MiB in use), less 256 MiB for trainscope "
          "itself); use smaller layers");
  }
  host.available = 4 * kGiB;
  CHECK_NOTHROW(core::check_host_memory(need, "x", "y", host));
}

TEST_CASE("training_memory_need: a software GPU counts as host memory, a real GPU does not; 16-bit adds its arena") {
  core::TrainConfig c;
  c.hidden = {2000, 2000};
  c.batch = 64;
  c.threads = 2;
  c.backends = {"gpu", "cpu"};
  core::DataSplit data = core::make_spiral(3, 100, 25, 0.02f, 1);
  const double cpu = core::training_memory_need(c, data, {{"cpu", true}}).total();
  const double on_host = core::training_memory_need(c, data, core::new_trainers(c, true)).total();
  const double real_gpu = core::training_memory_need(c, data, core::new_trainers(c, false)).total();
  CHECK(real_gpu == cpu);
  CHECK(on_host > cpu);
  // 4.0M parameters: weights, gradients and AdamW's two moments at 4 bytes, plus the packed copy of a 2000x2000 B.
  CHECK(cpu >= 16.0 * 4.0e6 + 4.0 * 4.0e6);
  c.precision = core::Precision::FP16;
  CHECK(core::training_memory_need(c, data, {{"cpu", true}}).total() > cpu);
}
