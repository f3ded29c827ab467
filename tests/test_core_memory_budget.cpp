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
#include "file_test_util.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A folder laid out as / (tests/file_test_util.hpp).
struct FakeRoot : test::FakeRoot {
  explicit FakeRoot(const std::string& name) : test::FakeRoot("trainscope_test_budget", name) {}
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

TEST_CASE("host_memory: the address-space limit (ulimit -v) less what the process maps already") {
  // Issue 34: a CNN under ulimit -v 1 GiB passed the check against MemAvailable and ended in std::bad_alloc.
  FakeRoot root("as");
  root.put("/proc/meminfo", kMeminfo);
  root.put("/proc/self/status", "Name:\ttrainscope\nVmPeak:\t  900000 kB\nVmSize:\t  262144 kB\nVmRSS: 10 kB\n");
  core::HostMemory h = core::host_memory(root.path.string(), -1);
  CHECK(h.available == doctest::Approx(20 * kGiB));
  h = core::host_memory(root.path.string(), 1 * kGiB);
  CHECK(h.available == doctest::Approx(0.75 * kGiB));
  CHECK(h.source.find("the address-space limit of this process (1.0 GiB by ulimit -v / RLIMIT_AS, 256 MiB of it "
                      "mapped already; raise it with ulimit -v)") == 0);
  // Already past it (a limit lowered under a running process): nothing is left, not a negative figure.
  CHECK(core::host_memory(root.path.string(), 0.1 * kGiB).available == 0);
  // A looser limit than the machine's memory leaves MemAvailable in charge.
  CHECK(core::host_memory(root.path.string(), 64 * kGiB).source == "MemAvailable in /proc/meminfo");
}

TEST_CASE("distinct_memory_texts: two different figures never read the same") {
  CHECK(core::distinct_memory_texts(3 * kGiB, 2 * kGiB) == std::pair<std::string, std::string>{"3.0 GiB", "2.0 GiB"});
  // Issue 34: "needs 2.1 GiB ... but 2.1 GiB is available".
  CHECK(core::distinct_memory_texts(2.13 * kGiB, 2.12 * kGiB) ==
        std::pair<std::string, std::string>{"2.13 GiB", "2.12 GiB"});
  CHECK(core::distinct_memory_texts(2 * kGiB + 5, 2 * kGiB) ==
        std::pair<std::string, std::string>{"2147483653 bytes", "2147483648 bytes"});
  CHECK(core::distinct_memory_texts(100.2 * (1 << 20), 100.7 * (1 << 20)) ==
        std::pair<std::string, std::string>{"100.20 MiB", "100.70 MiB"});
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
  // Less than trainscope keeps for itself (a tiny ulimit -v): said so, not "needs 0 MiB ... 0 MiB is available".
  host = {100.0 * (1 << 20), "the address-space limit of this process (...)"};
  CHECK_THROWS_WITH_AS(core::check_host_memory(core::MemoryNeed{}, "--hidden/--batch: this run", "use smaller", host),
                       "--hidden/--batch: this run: too little host memory for trainscope itself: 100 MiB is "
                       "available (the address-space limit of this process (...)), and it keeps 256 MiB for itself "
                       "and its libraries; free memory or raise the limit",
                       core::Error);
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

TEST_CASE("out_of_memory_text: what bounds the memory and what to change, never 'std::bad_alloc'") {
  const std::string text = core::out_of_memory_text("while training");
  CHECK(text.rfind("out of memory while training: an allocation failed that the memory check did not foresee", 0) == 0);
  CHECK(text.find(core::host_memory().source) != std::string::npos);
  CHECK(text.find("use smaller --batch or --hidden sizes") != std::string::npos);
  CHECK(text.find("bad_alloc") == std::string::npos);
}
