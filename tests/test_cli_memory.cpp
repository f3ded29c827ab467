// The host memory budget as a user meets it (issue 25): every command checks what it will allocate against the
// machine's available memory before allocating, and refuses in one line with the figures, exit code 2, within
// seconds and without growing (before the fix: bench and sweep grew to 24 GB and were OOM-killed, peaks allocated
// 3 x 16 GiB, a 6.4 GB train in a 3 GiB cgroup was killed with no message, a gzip bomb as the test images took 4 GB).
// TRAINSCOPE_MEMORY_LIMIT stands in for a small machine or memory cgroup (core/memory_budget.hpp reads both the
// same way; test_core_memory_budget covers the cgroup files themselves). Also the exit codes of issue 25's item 17.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using test::Result;
using test::run_cli;
using test::scratch_dir;

// While alive, the spawned trainscope sees TRAINSCOPE_MEMORY_LIMIT=value.
struct MemoryLimit {
  explicit MemoryLimit(const char* value) { platform::set_env("TRAINSCOPE_MEMORY_LIMIT", value); }
  ~MemoryLimit() { platform::unset_env("TRAINSCOPE_MEMORY_LIMIT"); }
};

// One line, exit 2, at once, mentioning each of `mentions`, and the process never grew past 200 MB.
void check_refused(const std::vector<std::string>& args, const std::vector<std::string>& mentions) {
  const auto start = std::chrono::steady_clock::now();
  const Result r = run_cli(args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("trainscope " << test::joined(args) << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("trainscope: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const auto& m : mentions) CHECK(r.err.find(m) != std::string::npos);
  CHECK(seconds < 5);
  CHECK(r.max_rss_kb < 200 * 1024);
}

void write_idx_gz(const fs::path& path, uint32_t magic, const std::vector<uint32_t>& dims, size_t payload) {
  std::string bytes;
  for (uint32_t v : std::vector<uint32_t>{magic}) bytes += {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  for (uint32_t v : dims) bytes += {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  bytes.append(payload, '\0');  // zeros: a bomb's best ratio
  gzFile f = gzopen(path.string().c_str(), "wb9");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

}  // namespace

TEST_CASE("bench, sweep and peaks check their memory before allocating (they grew until the OOM killer came)") {
  // On any machine: 32 to 193 GiB.
  check_refused({"bench", "--backend", "cpu", "--hidden", "65536,65536", "--sizes", "0", "--openblas", "none"},
                {"--hidden/--batch/--sizes: this bench: needs", "of host memory", "available"});
  check_refused({"bench", "--batch", "65536", "--hidden", "65536", "--sizes", "0"}, {"this bench: needs"});
  check_refused({"sweep", "--dataset", "spiral", "--spiral-points", "300", "--hidden", "65536,65536", "--backend",
                 "cpu", "--batch", "1", "--steps", "1", "--warmup", "0"},
                {"--hidden/--batch: this model needs 64.0 GiB"});
  check_refused({"peaks", "--backend", "cpu", "--remeasure", "--stream-mib", "16384"},
                {"--stream-mib: measuring: needs 48.0 GiB", "give a smaller --stream-mib"});
  // Within the 16 GiB cap of the model, but not within this "machine": the sweep itself and its points.
  MemoryLimit limit("1G");
  check_refused({"sweep", "--dataset", "spiral", "--spiral-points", "300", "--hidden", "8000,8000", "--backend", "cpu",
                 "--batch", "1", "--steps", "1", "--warmup", "0"},
                {"--hidden: this sweep: needs", "the initial weights", "TRAINSCOPE_MEMORY_LIMIT=1G"});
}

TEST_CASE("train and the dashboard check both trainers against the machine; a software GPU's memory counts twice") {
  MemoryLimit limit("3G");  // a 3 GiB memory cgroup, as the issue's run
  // ~6.4 GB of fp32 state: the CPU trainer alone is refused (before the fix: killed with no message).
  check_refused({"train", "--dataset", "spiral", "--hidden", "20000,20000", "--backend", "cpu", "--batch", "16"},
                {"--hidden/--batch: this run: needs", "CPU trainer: ", "TRAINSCOPE_MEMORY_LIMIT=3G",
                 "use smaller layers or batches"});
  // With a lesson the data and the budget come before the window (so this is refused without a display too).
  const fs::path lesson = scratch_dir() / "big-model.json";
  std::ofstream(lesson) << R"({"title": "too big", "settings": {"dataset": "spiral", "hidden": [20000, 20000],
                               "batch": 16}, "steps": [{"quit": 0}]})";
  check_refused({"dashboard", "--backend", "cpu", "--script", lesson.string()}, {"this run: needs"});
  if (test::no_vulkan_device()) return;
  // ~0.45 GiB per trainer under a 1 GiB limit: each would fit alone, both do not when the GPU is lavapipe (two copies
  // on the host). 30 million parameters: within lavapipe's 128 MiB storage binding (the device check, issue 20).
  MemoryLimit smaller("1G");
  const Result both =
      run_cli({"train", "--dataset", "spiral", "--hidden", "5500,5500", "--backend", "gpu,cpu", "--batch", "16"});
  INFO(both.err);
  CHECK(both.code == 2);
  CHECK(both.err.find("software Vulkan: its device memory is host memory") != std::string::npos);
  CHECK(both.err.find("or train one backend") != std::string::npos);
}

TEST_CASE("a gzip bomb as the test images: --limit bounds the test set too; without it the header is refused") {
  const fs::path dir = scratch_dir() / "test_bomb";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Headers of 1,000,000 test images (3 GiB as floats) in a few kilobytes; the training files are ordinary.
  write_idx_gz(dir / "train-images-idx3-ubyte.gz", 0x803, {2000, 28, 28}, 2000 * 784);
  write_idx_gz(dir / "train-labels-idx1-ubyte.gz", 0x801, {2000}, 2000);
  write_idx_gz(dir / "t10k-images-idx3-ubyte.gz", 0x803, {1000000, 28, 28}, 4000 * 784);
  write_idx_gz(dir / "t10k-labels-idx1-ubyte.gz", 0x801, {1000000}, 4000);
  // Before the fix the test files were inflated whole whatever --limit said (here: "truncated", exit 1; 4.18 GB
  // of a real bomb).
  const Result r = run_cli({"train", "--data", dir.string(), "--limit", "1000", "--backend", "cpu", "--epochs", "1",
                            "--hidden", "16", "--batch", "100"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("1000 training / 1000 test samples") != std::string::npos);
  CHECK(r.max_rss_kb < 200 * 1024);
  MemoryLimit limit("2G");
  check_refused({"train", "--data", dir.string(), "--backend", "cpu", "--epochs", "1"},
                {"--data " + dir.string() + ": reading the dataset: needs 2.9 GiB", "the test set: 2.9 GiB",
                 "read fewer samples with --limit N"});
}

TEST_CASE("exit codes agree across commands (issue 25, item 17)") {
  // A repeated backend was accepted by bench and peaks; bench --device 99 exited 1 where train exits 2.
  test::check_bad_input({"bench", "--backend", "gpu,gpu"}, "--backend gpu,gpu: gpu is named twice");
  test::check_bad_input({"peaks", "--backend", "cpu,cpu"}, "--backend cpu,cpu: cpu is named twice");
  test::check_bad_input({"peaks", "--backend", "cpu,"}, "an empty backend name");
  if (!test::no_vulkan_device()) {
    test::check_bad_input({"bench", "--device", "99", "--backend", "gpu", "--sizes", "0"}, "--device 99: no such");
    test::check_bad_input({"peaks", "--device", "99", "--backend", "gpu"}, "--device 99");
  }
  // sweep without a Vulkan driver exited 0 (train exits 1): a series that failed fails the command.
  platform::set_env("VK_ICD_FILENAMES", "/nonexistent.json");
  const Result r = run_cli({"sweep", "--dataset", "spiral", "--spiral-points", "50", "--hidden", "8", "--batch", "4",
                            "--steps", "1", "--warmup", "0"});
  platform::unset_env("VK_ICD_FILENAMES");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("trainscope: error: gpu: ") != std::string::npos);
  CHECK(r.out.find("cpu") != std::string::npos);  // the CPU series was still measured
}

TEST_CASE("train --screenshot: the picture's size is in the memory check; a --csv path past PATH_MAX is refused at once") {
  // Issue 34: a 16384x16384 screenshot (about 4 GB while rendered) was OOM-killed in a 4 GiB cgroup after the
  // training, and a --csv folder whose files' paths were too long failed after the training: the CSV files lost.
  {
    const MemoryLimit limit("1G");
    check_refused({"train", "--dataset", "spiral", "--hidden", "8", "--epochs", "1", "--backend", "cpu",
                   "--screenshot", (scratch_dir() / "big.png").string(), "--size", "16384x16384"},
                  {"--screenshot --size 16384x16384: needs ", "the picture 16384x16384, about 4 copies of 1.0 GiB",
                   "use a smaller --size"});
    // The dashboard's window and its screenshots, with its trainers in one budget (a lesson: checked before the
    // window opens, so without a display too). Before: not counted at all.
    const fs::path lesson = scratch_dir() / "big-window.json";
    std::ofstream(lesson) << R"({"title": "big window", "settings": {"dataset": "spiral", "hidden": [8]},
                                 "steps": [{"quit": 0}]})";
    check_refused({"dashboard", "--backend", "cpu", "--script", lesson.string(), "--size", "16384x16384"},
                  {"--hidden/--batch/--size: this run: needs ", "CPU trainer: ",
                   "the window and a screenshot of it, 16384x16384, about 4 copies of 1.0 GiB",
                   "use smaller layers or batches, a smaller --size"});
  }
  std::string deep = (scratch_dir() / "csv").string();
  while (deep.size() < 5000) deep += "/" + std::string(200, 'd');
  check_refused({"train", "--dataset", "spiral", "--hidden", "8", "--epochs", "1", "--backend", "cpu", "--csv", deep},
                {"--csv ", "is too long for this system; choose a shorter path"});
  CHECK_FALSE(fs::exists(scratch_dir() / "csv"));
}

TEST_CASE("the address-space limit (ulimit -v) is in the memory check; an allocation past it is said, not thrown") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("skipped: AddressSanitizer maps terabytes of shadow memory: no program of this build runs under ulimit -v");
  return;
#endif
  // Issue 34: a CNN fp16 run at batch 2048 under ulimit -v 1 GiB passed the check against MemAvailable and ended in
  // "unexpected error: std::bad_alloc" (on lavapipe, LLVM aborted or segfaulted). The soft limit is set in this
  // process around the spawn (the child inherits it) and raised back afterwards.
  struct AddressSpaceLimit {
    explicit AddressSpaceLimit(rlim_t bytes) {
      REQUIRE(::getrlimit(RLIMIT_AS, &saved) == 0);
      rlimit l = saved;
      l.rlim_cur = std::min(bytes, saved.rlim_max);
      REQUIRE(::setrlimit(RLIMIT_AS, &l) == 0);
    }
    ~AddressSpaceLimit() { ::setrlimit(RLIMIT_AS, &saved); }
    rlimit saved{};
  };
  const std::vector<std::string> cnn{"train", "--model", "cnn", "--precision", "fp16", "--batch", "2048", "--epochs",
                                     "1", "--limit", "2048", "--backend"};
  for (const char* backend : {"cpu", "gpu"}) {
    if (std::string(backend) == "gpu" && test::no_vulkan_device()) continue;
    std::vector<std::string> args = cnn;
    args.push_back(backend);
    Result r;
    {
      const AddressSpaceLimit limit(1ull << 30);
      r = run_cli(args);
    }
    INFO("trainscope " << test::joined(args) << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("--hidden/--batch: this run: needs ") != std::string::npos);
    CHECK(r.err.find("the address-space limit of this process (1.0 GiB by ulimit -v") != std::string::npos);
    CHECK(r.err.find("raise it with ulimit -v") != std::string::npos);
    CHECK(r.err.find("use smaller layers or batches") != std::string::npos);
    CHECK(r.out.find("epoch") == std::string::npos);  // refused before training
  }
}
