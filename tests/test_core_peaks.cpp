// Device peaks: the ceilings chosen from the figures, JSON round trips, and the per-device cache file (keys kept
// apart, an entry replaced, corrupt, foreign or odd files ignored with a warning, never a crash).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/peaks.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;

namespace {

core::PeakFigure fig(const std::string& id, double value, const std::string& unit = "GB/s") {
  core::PeakFigure f;
  f.id = id;
  f.label = "label of " + id;
  f.unit = unit;
  f.value = value;
  f.samples = {value * 0.9, value, value * 1.1, value, value};
  f.method = "how " + id + " is measured";
  return f;
}

core::DevicePeaks gpu_peaks(const std::string& key, double copy = 20) {
  core::DevicePeaks p;
  p.backend = "gpu";
  p.key = key;
  p.device = "llvmpipe [software Vulkan: runs on the CPU]";
  p.software = true;
  p.measured_at = "2026-11-20 10:00:00";
  p.seconds = 3.5;
  p.load_average = 7.25;
  p.figures = {fig("copy_shader", copy), fig("copy_transfer", copy * 1.5), fig("fma_fp32_scalar", 40, "GFLOP/s"),
               fig("fma_fp32_vec4", 90, "GFLOP/s"), fig("dispatch_round_trip", 80, "us")};
  core::PeakFigure fp16 = fig("fma_fp16", 0, "GFLOP/s");
  fp16.samples.clear();
  fp16.note = "not measured: the device has no shaderFloat16";
  p.figures.push_back(fp16);
  return p;
}

core::DevicePeaks cpu_peaks() {
  core::DevicePeaks p;
  p.backend = "cpu";
  p.key = core::cpu_peaks_key("AMD EPYC", 2);
  p.device = "AMD EPYC (2 threads, AVX-512 6x32)";
  p.threads = 2;
  p.cpu_kernel_simd = "avx512";
  p.figures = {fig("stream_copy_1t", 15), fig("stream_triad_1t", 17), fig("stream_copy_nt", 25),
               fig("stream_triad_nt", 22), fig("fma_avx512_1t", 200, "GFLOP/s"), fig("fma_avx512_nt", 400, "GFLOP/s"),
               fig("fma_avx2_1t", 100, "GFLOP/s"), fig("fma_avx2_nt", 210, "GFLOP/s")};
  return p;
}

// A fresh directory under the test's temporary folder, removed at the end.
struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("trainscope-peaks-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int n = 0;
};

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("roof ceilings: the better bandwidth and compute figure for the backend and thread count") {
  core::DevicePeaks hardware = gpu_peaks("k");
  hardware.software = false;
  const core::RoofCeilings g = core::roof_ceilings(hardware, 0);
  CHECK(g.bandwidth_gbps == doctest::Approx(30.0));  // vkCmdCopyBuffer beats the copy shader here
  CHECK(g.bandwidth_from == "label of copy_transfer");
  // A software device (lavapipe): what its kernels can reach, the copy shader, however fast its vkCmdCopyBuffer.
  const core::RoofCeilings soft = core::roof_ceilings(gpu_peaks("k"), 0);
  CHECK(soft.bandwidth_gbps == doctest::Approx(20.0));
  CHECK(soft.bandwidth_from == "label of copy_shader");
  CHECK(g.compute_gflops == doctest::Approx(90.0));  // vec4 beats scalar
  CHECK(g.compute_from == "label of fma_fp32_vec4");

  const core::RoofCeilings all = core::roof_ceilings(cpu_peaks(), 2);
  CHECK(all.bandwidth_gbps == doctest::Approx(25.0));
  CHECK(all.compute_gflops == doctest::Approx(400.0));  // the kernels' width (AVX-512), not the AVX2 figure
  const core::RoofCeilings one = core::roof_ceilings(cpu_peaks(), 1);
  CHECK(one.bandwidth_gbps == doctest::Approx(17.0));
  CHECK(one.compute_gflops == doctest::Approx(200.0));
  core::DevicePeaks avx2 = cpu_peaks();
  avx2.cpu_kernel_simd = "avx2";  // TRAINSCOPE_CPU_SIMD=avx2: the kernels run AVX2
  CHECK(core::roof_ceilings(avx2, 2).compute_gflops == doctest::Approx(210.0));

  const core::RoofCeilings none = core::roof_ceilings(core::DevicePeaks{}, 2);
  CHECK(none.bandwidth_gbps == 0);
  CHECK(none.compute_gflops == 0);
}

TEST_CASE("keys name the device: deviceUUID and driver version, CPU model and thread count") {
  std::array<unsigned char, 16> uuid{};
  for (int i = 0; i < 16; ++i) uuid[static_cast<size_t>(i)] = static_cast<unsigned char>(i * 17);
  CHECK(core::gpu_peaks_key(uuid, 4194311) == "vulkan:00112233445566778899aabbccddeeff:4194311");
  CHECK(core::gpu_peaks_key(uuid, 1) != core::gpu_peaks_key(uuid, 2));
  CHECK(core::cpu_peaks_key("AMD EPYC", 2) == "cpu:AMD EPYC:2 threads");
}

TEST_CASE("peaks survive a JSON round trip; bad entries are refused naming the field") {
  const core::DevicePeaks p = gpu_peaks("vulkan:ab:1");
  const core::DevicePeaks q = core::peaks_from_json(core::peaks_to_json(p));
  CHECK(q.key == p.key);
  CHECK(q.software);
  CHECK(q.load_average == doctest::Approx(7.25));
  REQUIRE(q.figures.size() == p.figures.size());
  CHECK(q.figures[3].id == "fma_fp32_vec4");
  CHECK(q.figures[3].samples == p.figures[3].samples);
  CHECK(q.find("fma_fp16")->note == "not measured: the device has no shaderFloat16");
  CHECK(q.value("fma_fp16") == 0);
  CHECK(q.value("no_such_figure") == 0);

  nlohmann::json j = core::peaks_to_json(p);
  j["figures"][0]["value"] = -3.0;
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("copy_shader"), core::Error);
  j = core::peaks_to_json(p);
  j.erase("key");
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("\"key\""), core::Error);
  j = core::peaks_to_json(p);
  j["backend"] = "tpu";
  CHECK_THROWS_AS(core::peaks_from_json(j), core::Error);
  j = core::peaks_to_json(p);
  j["figures"][1]["samples"] = "fast";
  CHECK_THROWS_WITH_AS(core::peaks_from_json(j), doctest::Contains("samples"), core::Error);
}

TEST_CASE("the cache keeps one entry per device key and replaces an entry on re-measuring") {
  TempDir dir;
  const fs::path path = dir.path / "sub" / "peaks.json";  // the directory is created
  std::string warning;
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK(warning.empty());  // no cache yet is not a problem

  core::save_peaks(path, gpu_peaks("vulkan:aa:1", 20));
  core::save_peaks(path, cpu_peaks());
  core::save_peaks(path, gpu_peaks("vulkan:bb:1", 33));
  CHECK(core::load_peaks_cache(path).size() == 3);
  core::save_peaks(path, gpu_peaks("vulkan:aa:1", 44));  // re-measured
  const auto all = core::load_peaks_cache(path, &warning);
  CHECK(warning.empty());
  CHECK(all.size() == 3);
  const auto aa = core::find_cached_peaks(path, "vulkan:aa:1");
  REQUIRE(aa.has_value());
  CHECK(aa->value("copy_shader") == doctest::Approx(44.0));
  CHECK(core::find_cached_peaks(path, "vulkan:bb:1")->value("copy_shader") == doctest::Approx(33.0));
  CHECK(core::find_cached_peaks(path, core::cpu_peaks_key("AMD EPYC", 2)).has_value());
  CHECK_FALSE(core::find_cached_peaks(path, core::cpu_peaks_key("AMD EPYC", 4)).has_value());  // another VM size
  // No temporary files are left beside it (atomic writes renamed into place).
  int files = 0;
  for (const auto& e : fs::directory_iterator(path.parent_path())) files += e.path().filename().string()[0] == '.';
  CHECK(files == 0);
}

TEST_CASE("a corrupt, foreign, outdated or odd cache is ignored with a warning and replaced at the next save") {
  TempDir dir;
  const fs::path path = dir.path / "peaks.json";
  std::string warning;
  for (const std::string& text :
       {std::string("{not json"), std::string("[1, 2, 3]"), std::string(R"({"format": "other", "devices": []})"),
        std::string(R"({"format": "trainscope-peaks", "version": 999, "devices": []})"), std::string()}) {
    CAPTURE(text);
    write(path, text);
    warning.clear();
    CHECK(core::load_peaks_cache(path, &warning).empty());
    CHECK(warning.find("measured again") != std::string::npos);
  }
  // One bad entry among good ones: the good ones are kept.
  nlohmann::json good = core::peaks_to_json(cpu_peaks());
  nlohmann::json bad = good;
  bad["figures"] = 7;
  write(path, nlohmann::json({{"format", "trainscope-peaks"}, {"version", 1}, {"devices", {bad, good}}}).dump());
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).size() == 1);
  CHECK(warning.find("1 entry could not be read") != std::string::npos);

  write(path, "{garbage");
  core::save_peaks(path, gpu_peaks("vulkan:cc:2"));
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).size() == 1);
  CHECK(warning.empty());

  // A directory where the file should be: a warning, nothing read, no crash; saving then fails with a message.
  const fs::path odd = dir.path / "odd.json";
  fs::create_directories(odd);
  warning.clear();
  CHECK(core::load_peaks_cache(odd, &warning).empty());
  CHECK(warning.find("directory") != std::string::npos);
  CHECK_THROWS_AS(core::save_peaks(odd, cpu_peaks()), core::Error);
  // Too large to be a peaks cache: not read.
  write(path, std::string(core::kMaxPeaksCacheBytes + 10, ' '));
  warning.clear();
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK_FALSE(warning.empty());
}

TEST_CASE("the cache lives under XDG_CACHE_HOME, else ~/.cache; a relative XDG_CACHE_HOME is ignored") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-cache", 1);
  CHECK(core::default_peaks_path() == fs::path("/tmp/xdg-cache/trainscope/peaks.json"));
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  ::setenv("HOME", "/home/teacher", 1);
  CHECK(core::default_peaks_path() == fs::path("/home/teacher/.cache/trainscope/peaks.json"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  CHECK(core::default_peaks_path().empty());
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE("the cache's lock held elsewhere: saving gives up after LockWait's seconds, naming the lock and its holder") {
  TempDir dir;
  const fs::path path = dir.path / "peaks.json";
  core::save_peaks(path, cpu_peaks());
  CHECK(core::LockWait{}.seconds <= 30);  // issue 25: never a wait for ever (flock ... sleep 120 blocked train)
  // Another holder: a second open file description of the lock (flock conflicts between them, even in one process).
  const int holder = ::open((path.string() + ".lock").c_str(), O_RDWR);
  REQUIRE(holder >= 0);
  REQUIRE(::flock(holder, LOCK_EX) == 0);
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  try {
    core::save_peaks(path, gpu_peaks("vulkan:dd:1"), core::LockWait{0.3, {}});
  } catch (const core::Error& e) {
    why = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 0.3);
  CHECK(waited < 5);
  CHECK(why.find(path.string() + ".lock") != std::string::npos);
  CHECK(why.find(fmt::format("held by process {} (", ::getpid())) != std::string::npos);  // from /proc/locks
  CHECK(why.find("not cached") != std::string::npos);
  // A cancel (a SIGINT in train) ends the wait at once instead of after the seconds.
  const auto cancel_start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(core::save_peaks(path, gpu_peaks("vulkan:dd:1"), core::LockWait{30, [] { return true; }}),
                       doctest::Contains("stopped waiting"), core::Error);
  CHECK(std::chrono::steady_clock::now() - cancel_start < std::chrono::seconds(5));
  ::close(holder);
  core::save_peaks(path, gpu_peaks("vulkan:dd:1"));  // released: saved, the earlier entry kept
  CHECK(core::load_peaks_cache(path).size() == 2);
}

TEST_CASE("a peaks cache that is a symlink, or another user's, is never replaced: the file and its entries stay") {
  TempDir dir;
  const fs::path notes = dir.path / "notes.txt", path = dir.path / "peaks.json";
  { std::ofstream(notes) << "a teacher's notes"; }
  fs::create_symlink(notes, path);
  std::string warning;
  CHECK(core::load_peaks_cache(path, &warning).empty());
  CHECK(warning.find("symlink") != std::string::npos);
  CHECK(warning.find("peaks cache " + path.string() + ": peaks cache") == std::string::npos);  // said once
  CHECK_THROWS_WITH_AS(core::save_peaks(path, cpu_peaks()), doctest::Contains("symlink"), core::Error);
  std::ifstream in(notes);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "a teacher's notes");

  const fs::path theirs = dir.path / "theirs" / "peaks.json";
  core::save_peaks(theirs, gpu_peaks("vulkan:ee:1"));
  fs::permissions(theirs, fs::perms::owner_read | fs::perms::owner_write);
  if (::chown(theirs.c_str(), 4242, 4242) != 0) {  // not root: a file cannot be given away, the case cannot run
    test::skip("another user's peaks cache", "giving a file to another user needs root (run the tests as root)");
    return;
  }
  CHECK_THROWS_WITH_AS(core::save_peaks(theirs, cpu_peaks()), doctest::Contains("belongs to another user"),
                       core::Error);
  CHECK(core::load_peaks_cache(theirs).size() == 1);  // before the fix: replaced, the other device's entry lost
  CHECK(core::find_cached_peaks(theirs, "vulkan:ee:1").has_value());
}
