// `train --trace` and `train --csv` as a user meets them: the trace opens as Chrome trace-event JSON (every event with
// name, ph, ts, dur, pid, tid; no two events of one track overlapping; per step, the GPU queue's kernel events sum
// to the measured kernel time of that step within 1%), the CSV files have one row per step and backend, and output
// paths that cannot be written are refused before any training.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_test_util.hpp"
#include "gpu_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The rows of a CSV file without quoted fields (what steps.csv holds), header first, each split at commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::istringstream l(line);
    for (std::string f; std::getline(l, f, ',');) fields.push_back(f);
    if (!line.empty() && line.back() == ',') fields.push_back("");
    rows.push_back(fields);
  }
  return rows;
}

size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE_MESSAGE(it != header.end(), "steps.csv has no column " << name);
  return static_cast<size_t>(it - header.begin());
}

}  // namespace

TEST_CASE("train --trace and --csv: a valid trace of the last steps and one CSV row per step and backend") {
  const bool gpu = test::vulkan_device_or_skip("train --trace with the gpu backend");
  const fs::path dir = test::scratch_dir() / "trace";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "t.json").string(), csv = (dir / "csv").string();
  const std::string report = (dir / "r.json").string();
  const int trace_steps = 6;
  const test::Result r = test::run_cli({"train", "--dataset", "spiral", "--spiral-points", "200", "--hidden", "32",
                                        "--batch", "50", "--epochs", "2", "--backend", gpu ? "gpu,cpu" : "cpu",
                                        "--threads", "2", "--trace", trace, "--trace-steps",
                                        std::to_string(trace_steps), "--csv", csv, "--report", report});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);

  // The CSV: one row per step and backend, as many as the report says each backend trained.
  const json rep = json::parse(test::slurp(report));
  const auto steps = csv_rows(test::slurp(fs::path(csv) / "steps.csv"));
  REQUIRE(steps.size() > 1);
  const auto& header = steps[0];
  const size_t c_backend = column(header, "backend"), c_step = column(header, "step");
  const size_t c_kernel = column(header, "kernel_seconds");
  std::map<std::string, std::set<long>> steps_of;
  std::map<std::pair<std::string, long>, double> kernel_seconds;
  for (size_t i = 1; i < steps.size(); ++i) {
    REQUIRE(steps[i].size() == header.size());
    const long step = std::stol(steps[i][c_step]);
    CHECK_MESSAGE(steps_of[steps[i][c_backend]].insert(step).second, "a second row for step " << step);
    kernel_seconds[{steps[i][c_backend], step}] = std::stod(steps[i][c_kernel]);
  }
  const long per_backend = 2 * (3 * 200 / 50);  // 2 epochs of 600 training points in batches of 50
  for (const auto& b : rep["backends"]) {
    const std::string name = b["name"];
    CHECK_MESSAGE(static_cast<long>(steps_of[name].size()) == per_backend, name);
    CHECK(*steps_of[name].begin() == 0);
    CHECK(*steps_of[name].rbegin() == per_backend - 1);
  }
  CHECK(steps_of.size() == (gpu ? 2u : 1u));
  for (const char* f : {"kernels.csv", "peaks.csv"}) CHECK(fs::exists(fs::path(csv) / f));
  CHECK(csv_rows(test::slurp(fs::path(csv) / "kernels.csv")).size() > 1);

  // The trace: valid JSON, every event complete, metadata naming each process and thread.
  const json t = json::parse(test::slurp(trace));
  REQUIRE(t.contains("traceEvents"));
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;  // per (pid, tid): (ts, end)
  for (const json& e : t["traceEvents"]) {
    for (const char* key : {"name", "ph", "ts", "dur", "pid", "tid"}) REQUIRE_MESSAGE(e.contains(key), e.dump());
    const int pid = e["pid"], tid = e["tid"];
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") thread_names[{pid, tid}] = e["args"]["name"];
      if (e["name"] == "process_name") process_names[pid] = e["args"]["name"];
      continue;
    }
    if (e["ph"] == "C") {  // the busy share per step: a percentage
      CHECK(e["args"]["percent"].get<double>() >= 0);
      CHECK(e["args"]["percent"].get<double>() <= 100);
      continue;
    }
    REQUIRE(e["ph"] == "X");
    CHECK(e["dur"].get<double>() >= 0);
    spans[{pid, tid}].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  // No two events of one track overlap (ts and dur in microseconds, written with nanosecond resolution).
  for (auto& [track, list] : spans) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i)
      CHECK_MESSAGE(list[i].first >= list[i - 1].second - 1e-3, "overlap on " << thread_names[track]);
  }
  // Per backend: the CPU pool's threads (the trainer thread and a worker), and for the GPU its queue and the host.
  std::set<std::string> tracks;
  for (const auto& [key, name] : thread_names) tracks.insert(process_names[key.first].substr(0, 3) + "/" + name);
  INFO("tracks: " << [&] {
    std::string s;
    for (const auto& n : tracks) s += n + "; ";
    return s;
  }());
  CHECK(tracks.count("CPU/thread 0 (trainer)") == 1);  // worker threads' tracks appear where they took chunks
  if (!gpu) return;
  CHECK(tracks.count("GPU/GPU queue") == 1);
  CHECK(tracks.count("GPU/host (trainer thread)") == 1);

  // Per step, the GPU queue's kernel events sum to that step's measured kernel time (steps.csv) within 1%; the trace
  // holds exactly the last --trace-steps steps.
  int gpu_pid = -1, queue_tid = -1;
  for (const auto& [key, name] : thread_names)
    if (name == "GPU queue") gpu_pid = key.first, queue_tid = key.second;
  std::map<long, double> queue_us;
  std::set<std::string> host_phases;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != gpu_pid) continue;
    if (e["tid"] == queue_tid) {
      queue_us[e["args"]["step"].get<long>()] += e["dur"].get<double>();
      for (const char* arg : {"flops", "bytes", "batch", "precision"}) CHECK(e["args"].contains(arg));
    } else {
      host_phases.insert(e["name"].get<std::string>());
    }
  }
  REQUIRE(static_cast<int>(queue_us.size()) == trace_steps);
  CHECK(queue_us.begin()->first == per_backend - trace_steps);
  for (const auto& [step, us] : queue_us) {
    const double measured = kernel_seconds[{"gpu", step}] * 1e6;
    REQUIRE(measured > 0);
    CHECK_MESSAGE(std::abs(us - measured) <= 0.01 * measured, "step " << step << ": " << us << " vs " << measured);
  }
  for (const char* phase : {"record", "submit", "fence wait", "read-back"}) CHECK(host_phases.count(phase) == 1);
}

TEST_CASE("train --trace / --csv: unwritable paths are refused before training, with exit code 2") {
  const fs::path dir = test::scratch_dir() / "trace-bad";
  fs::create_directories(dir);
  const std::vector<std::string> base = {"train", "--dataset", "spiral", "--backend", "cpu", "--epochs", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  test::check_bad_input(with({"--trace", (dir / "missing" / "t.json").string()}), "--trace");
  test::check_bad_input(with({"--trace", dir.string()}), "--trace");
  test::check_bad_input(with({"--trace", (dir / "t.json").string(), "--trace-steps", "0"}), "--trace-steps");
  std::ofstream(dir / "a-file") << "x";
  test::check_bad_input(with({"--csv", (dir / "a-file").string()}), "--csv");
  // A missing folder is made with its parents (issue 25); one under a file cannot be.
  test::check_bad_input(with({"--csv", (dir / "a-file" / "csv").string()}), "--csv");
  CHECK_FALSE(fs::exists(dir / "t.json"));
}
