// core/thread_budget: how many threads the pids cgroups (v1, v2, every level) and RLIMIT_NPROC let this process start,
// read from fixtures laid out as /proc and /sys/fs/cgroup, and the one-line refusal naming the setting that fixes it
// (issue 34: `--threads 64` or `--loader-threads 64` under a pids limit ended in std::terminate or a hang).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/thread_budget.hpp"
#include "file_test_util.hpp"

namespace fs = std::filesystem;

namespace {

// A folder laid out as / (tests/file_test_util.hpp).
struct FakeRoot : test::FakeRoot {
  explicit FakeRoot(const std::string& name) : test::FakeRoot("trainscope_test_threads", name) {}
};

// The refusal's text, or "" when `c` fits in `room`.
std::string refusal(const core::TrainConfig& c, const std::vector<core::NewTrainer>& trainers, long room) {
  try {
    core::check_training_threads(c, trainers, {room, "the pids cgroup /x (pids.max 50, 10 in use)"});
    return "";
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::InvalidArgument);
    return e.what();
  }
}

}  // namespace

TEST_CASE("thread_room: the tightest pids cgroup of any level, v2 and v1; 'max' and nothing readable are no limit") {
  FakeRoot v2("v2");
  v2.put("/proc/self/cgroup", "0::/user.slice/session.scope\n");
  CHECK(core::thread_room(v2.path.string(), -1, -1).room == -1);
  v2.put("/sys/fs/cgroup/user.slice/session.scope/pids.max", "max\n");
  v2.put("/sys/fs/cgroup/user.slice/session.scope/pids.current", "12\n");
  v2.put("/sys/fs/cgroup/user.slice/pids.max", "100\n");
  v2.put("/sys/fs/cgroup/user.slice/pids.current", "60\n");
  core::ThreadRoom r = core::thread_room(v2.path.string(), -1, -1);
  CHECK(r.room == 40);
  CHECK(r.source == "the pids cgroup /user.slice (pids.max 100, 60 in use)");

  FakeRoot v1("v1");
  v1.put("/proc/self/cgroup", "8:pids:/lab/pc7\n4:memory:/lab/pc7\n0::/\n");
  v1.put("/sys/fs/cgroup/pids/lab/pc7/pids.max", "32\n");
  v1.put("/sys/fs/cgroup/pids/lab/pc7/pids.current", "40\n");  // lowered below its use: nothing left, not negative
  r = core::thread_room(v1.path.string(), -1, -1);
  CHECK(r.room == 0);
  CHECK(r.source == "the pids cgroup /lab/pc7 (pids.max 32, 40 in use)");
}

TEST_CASE("thread_room: RLIMIT_NPROC counts every thread of the user's processes, not of this one alone") {
  FakeRoot root("nproc");
  root.put("/proc/self/cgroup", "0::/\n");
  root.put("/proc/101/status", "Name:\tbash\nUid:\t1000\t1000\t1000\t1000\nThreads:\t1\n");
  root.put("/proc/202/status", "Name:\ttrainscope\nUid:\t1000\t1000\t1000\t1000\nThreads:\t9\n");
  root.put("/proc/303/status", "Name:\tsshd\nUid:\t0\t0\t0\t0\nThreads:\t50\n");  // another user's
  root.put("/proc/self/status", "Name:\ttrainscope\nUid:\t1000\t1000\t1000\t1000\nThreads:\t9\n");  // not a PID
  const core::ThreadRoom r = core::thread_room(root.path.string(), 64, 1000);
  CHECK(r.room == 54);
  CHECK(r.source == "ulimit -u 64 (RLIMIT_NPROC, the user's processes and threads: 10 running)");
  CHECK(core::thread_room(root.path.string(), -1, 1000).room == -1);
}

TEST_CASE("check_training_threads: the count by part, the room and from where, and a setting that fixes it") {
  core::TrainConfig c;
  c.threads = 64;
  const std::vector<core::NewTrainer> cpu{{"cpu", true}};
  CHECK(core::training_thread_need(c, cpu).total() == 64);  // 63 in the pool + its worker
  CHECK(refusal(c, cpu, 64).empty());
  CHECK(refusal(c, cpu, 40) ==
        "--threads/--loader-threads: this run starts 64 threads (the CPU trainer's pool: 63, workers and the GPU "
        "driver's: 1), but this process may start 40 more (the pids cgroup /x (pids.max 50, 10 in use)); use "
        "--threads 40 or fewer, or raise the limit (ulimit -u, or the cgroup's pids.max)");
  // The advice is right: the run it names fits.
  c.threads = 40;
  CHECK(refusal(c, cpu, 40).empty());

  // Loaders: fewer CPU threads are not enough; fewer loader threads (at least one per trainer) are.
  c.threads = 2;
  c.input.source = core::InputSource::Host;
  c.input.loader_threads = 64;
  const std::vector<core::NewTrainer> both{{"gpu", false}, {"cpu", true}};  // a real GPU: no driver threads counted
  CHECK(core::training_thread_need(c, both).total() == 1 + 2 + 128);
  std::string text = refusal(c, both, 40);
  CHECK(text.find("use --threads 1 and --loader-threads 19 or fewer") != std::string::npos);
  c.threads = 1;
  c.input.loader_threads = 19;
  CHECK(refusal(c, both, 40).empty());

  // A software GPU starts threads of its own, which no setting removes.
  const std::vector<core::NewTrainer> lavapipe{{"gpu", true}};
  const long driver = static_cast<long>(std::max(1u, std::thread::hardware_concurrency())) + 4;
  CHECK(core::training_thread_need(c, lavapipe).others == 1 + driver);
  text = refusal(c, lavapipe, 2);
  CHECK(text.find("no thread setting makes it fit: raise the limit (ulimit -u") != std::string::npos);
  // No limit known: nothing refused.
  c.threads = 100000;
  CHECK_NOTHROW(core::check_training_threads(c, cpu, core::ThreadRoom{}));
}
