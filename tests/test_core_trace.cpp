// The step timeline built from synthetic step records (GPU: timestamps with gaps, host phases; CPU: pool-thread
// spans), its per-step breakdown, the Chrome trace written from it (parsed back: every event complete, tracks without
// overlap, kernel sums as measured) and the CSV tables.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/csv_export.hpp"
#include "core/error.hpp"
#include "core/timeline.hpp"
#include "core/trace.hpp"

namespace {

core::StepPlan plan(int batch = 32) {
  return core::build_step_plan(core::ModelShape({2, 16, 3}), batch, core::Activation::ReLU, core::Optimizer::AdamW);
}

// A GPU-like step: kernels from "timestamps" with a 0.01 ms gap before each, starting at `start`; host phases before.
core::StepRecord gpu_step(const core::StepPlan& p, long step, double start) {
  core::StepRecord r;
  r.step = step;
  r.loss = 1.0f / static_cast<float>(step + 1);
  r.start_s = start;
  double t = 0;
  for (size_t i = 0; i < p.entries.size(); ++i) {
    t += 0.01;  // the barrier before each dispatch
    r.kernel_start_ms.push_back(t);
    r.kernel_ms.push_back(0.05 + 0.01 * static_cast<double>(i % 3));
    t += r.kernel_ms.back();
  }
  r.step_ms = t;
  r.host = {{core::HostPhase::Record, start - 300e-6, start - 200e-6},
            {core::HostPhase::Submit, start - 200e-6, start - 150e-6}};
  if (step % 2 == 1)
    r.host.push_back({core::HostPhase::FenceWait, start + t * 1e-3, start + t * 1e-3 + 20e-6});
  return r;
}

// A CPU-like step: kernels back to back from `start`; worker threads 1 and 2 each busy for part of every kernel.
core::StepRecord cpu_step(const core::StepPlan& p, long step, double start) {
  core::StepRecord r;
  r.step = step;
  r.start_s = start;
  double t = 0;
  for (size_t i = 0; i < p.entries.size(); ++i) {
    r.kernel_ms.push_back(0.1);
    for (int thread : {1, 2})
      r.threads.push_back({thread, static_cast<int>(i), start + (t + 0.01 * thread) * 1e-3, start + (t + 0.08) * 1e-3});
    t += 0.1;
  }
  r.step_ms = t;
  return r;
}

struct Parsed {
  nlohmann::json j;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;  // (pid, tid) -> [start, end) in us
  std::map<std::string, int> pid_of;                                           // process name -> pid
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.j = nlohmann::json::parse(text);  // throws on invalid JSON
  REQUIRE(p.j.contains("traceEvents"));
  for (const auto& e : p.j["traceEvents"]) {
    for (const char* key : {"name", "ph", "ts", "dur", "pid", "tid"}) {
      CAPTURE(key);
      REQUIRE(e.contains(key));
    }
    if (e["ph"] == "M" && e["name"] == "process_name") p.pid_of[e["args"]["name"].get<std::string>()] = e["pid"];
    if (e["ph"] == "X") {
      const double ts = e["ts"], dur = e["dur"];
      CHECK(dur >= 0);
      p.tracks[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
    }
  }
  return p;
}

}  // namespace

TEST_CASE("the timeline keeps the last N steps; GPU kernels sit at their timestamps with the gaps between") {
  const core::StepPlan p = plan();
  core::TimelineRecorder rec(3);
  const double t0 = 1000.0;
  for (long s = 0; s < 5; ++s) rec.add(p, gpu_step(p, s, t0 + 0.01 * static_cast<double>(s)));
  CHECK(rec.size() == 3);
  const core::BackendTimeline t = rec.timeline("gpu", "test device");
  REQUIRE(t.steps.size() == 3);
  CHECK(t.steps.front().step == 2);
  CHECK(t.batch == 32);
  REQUIRE(t.tracks.size() == 2);
  CHECK(t.tracks[0].kind == core::TrackKind::GpuQueue);
  CHECK(t.tracks[1].kind == core::TrackKind::Host);
  const auto& queue = t.tracks[0].events;
  REQUIRE(queue.size() == 3 * p.entries.size());
  // The first kernel of step 2 starts 0.01 ms after the step's start: the gap is visible.
  CHECK(queue[0].start_s == doctest::Approx(t0 + 0.02 + 0.01e-3).epsilon(1e-12));
  CHECK(queue[1].start_s - queue[0].end_s == doctest::Approx(0.01e-3).epsilon(1e-6));
  CHECK(queue[0].name == std::string(p.entries[0].kernel()));
  CHECK(queue[0].flops == p.entries[0].flops);

  // Breakdown: kernel time is the sum of kernel_ms; wall time from the previous step's last kernel to this one's.
  const core::StepRecord s3 = gpu_step(p, 3, t0 + 0.03);
  double kernels = 0;
  for (double ms : s3.kernel_ms) kernels += ms;
  CHECK(t.steps[1].kernel_s == doctest::Approx(kernels * 1e-3));
  const double end2 = t0 + 0.02 + gpu_step(p, 2, 0).step_ms * 1e-3, end3 = t0 + 0.03 + s3.step_ms * 1e-3;
  CHECK(t.steps[1].wall_s == doctest::Approx(end3 - end2).epsilon(1e-9));
  CHECK(t.steps[1].overhead_s() == doctest::Approx(t.steps[1].wall_s - t.steps[1].kernel_s));
  CHECK(t.steps[1].ratio() > 1.0);
  CHECK(t.steps[1].host_s == doctest::Approx(150e-6 + 20e-6));  // record, submit, fence wait
}

TEST_CASE("CPU steps give one track per pool thread, the calling thread running every kernel") {
  const core::StepPlan p = plan();
  core::TimelineRecorder rec(4);
  for (long s = 0; s < 2; ++s) rec.add(p, cpu_step(p, s, 50.0 + 0.001 * static_cast<double>(s)));
  const core::BackendTimeline t = rec.timeline("cpu", "cpu");
  REQUIRE(t.tracks.size() == 3);
  CHECK(t.tracks[0].name == "thread 0 (trainer)");
  CHECK(t.tracks[1].name == "thread 1");
  CHECK(t.tracks[2].events.size() == 2 * p.entries.size());
  CHECK(t.tracks[1].events[0].seconds() == doctest::Approx(0.07e-3));
  CHECK(t.tracks[2].events[0].seconds() == doctest::Approx(0.06e-3));
}

TEST_CASE("the trace parses back: complete events, no overlap within a track, kernel sums as measured") {
  const core::StepPlan p = plan();
  core::TimelineRecorder gpu(4), cpu(4);
  std::map<long, double> gpu_kernel_ms;
  for (long s = 0; s < 4; ++s) {
    const core::StepRecord g = gpu_step(p, s, 2000.0 + 0.002 * static_cast<double>(s));
    for (double ms : g.kernel_ms) gpu_kernel_ms[s] += ms;
    gpu.add(p, g);
    cpu.add(p, cpu_step(p, s, 2000.0005 + 0.004 * static_cast<double>(s)));
  }
  const Parsed parsed = parse(core::trace_json({gpu.timeline("gpu", "GPU dev"), cpu.timeline("cpu", "CPU dev")},
                                               {{"model", "2-16-3"}})
                                  .dump());
  CHECK(parsed.j["otherData"]["model"] == "2-16-3");
  REQUIRE(parsed.pid_of.count("GPU: GPU dev"));
  REQUIRE(parsed.pid_of.count("CPU: CPU dev"));
  CHECK(parsed.tracks.size() == 2 + 3);  // GPU queue + host, CPU threads 0..2
  for (const auto& [track, spans] : parsed.tracks) {
    auto sorted = spans;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) CHECK(sorted[i].first >= sorted[i - 1].second - 1e-9);
  }
  // Per step, the GPU queue's kernel events add up to the measured kernel time (within 1%).
  std::map<long, double> traced_us;
  for (const auto& e : parsed.j["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == parsed.pid_of.at("GPU: GPU dev") && e["cat"] == "kernel") {
      traced_us[e["args"]["step"].get<long>()] += e["dur"].get<double>();
      CHECK(e["args"].contains("flops"));
      CHECK(e["args"]["batch"] == 32);
      CHECK(e["args"]["precision"] == "fp32");
    }
  REQUIRE(traced_us.size() == 4);
  for (const auto& [step, us] : traced_us) CHECK(us == doctest::Approx(gpu_kernel_ms[step] * 1e3).epsilon(0.01));
  // The earliest event is at ts 0.
  double first = 1e300;
  for (const auto& [track, spans] : parsed.tracks)
    for (const auto& s : spans) first = std::min(first, s.first);
  CHECK(first == doctest::Approx(0.0));
}

TEST_CASE("the trace is written atomically; an unwritable path is an error, not a partial file") {
  const auto dir = std::filesystem::temp_directory_path() / ("trainscope-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const core::StepPlan p = plan();
  core::TimelineRecorder rec(2);
  rec.add(p, gpu_step(p, 0, 10.0));
  core::write_trace((dir / "t.json").string(), {rec.timeline("gpu", "d")});
  std::ifstream in(dir / "t.json");
  std::stringstream text;
  text << in.rdbuf();
  in.close();  // Windows does not remove a file that is open
  CHECK_NOTHROW(parse(text.str()));
  CHECK_THROWS_AS(core::write_trace((dir / "missing" / "t.json").string(), {rec.timeline("gpu", "d")}), core::Error);
  CHECK_FALSE(std::filesystem::exists(dir / "missing"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("CSV: one row per step and backend, quoted fields, a kernel table per precision and batch") {
  CHECK(core::csv_field("plain") == "plain");
  CHECK(core::csv_field("a,b") == "\"a,b\"");
  CHECK(core::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(core::csv_field("two\nlines") == "\"two\nlines\"");

  core::BackendRun gpu, cpu;
  gpu.name = "gpu";
  gpu.device = "llvmpipe, software";
  cpu.name = "cpu";
  for (long s = 0; s < 5; ++s) {
    core::StepRow row;
    row.step = s;
    row.wall_ms = 3.0f;
    row.step_ms = 2.5f;
    row.kernel_ms = 2.0f;
    row.busy_ms = 1.5f;
    row.loss = 0.5f;
    row.lr = 0.001f;
    row.batch = 64;
    row.precision = s < 3 ? core::Precision::FP32 : core::Precision::FP16;
    row.loss_scale = s < 3 ? 0.0f : 65536.0f;
    row.skipped = s == 4;
    gpu.step_rows.push_back(row);
    if (s < 4) cpu.step_rows.push_back(row);
  }
  const std::string steps = core::steps_csv({gpu, cpu});
  std::istringstream lines(steps);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  REQUIRE(rows.size() == 1 + 5 + 4);
  CHECK(rows[0] ==
        "backend,step,wall_seconds,step_seconds,kernel_seconds,loss,batch,precision,lr,loss_scale,skipped,"
        "busy_seconds\r");
  CHECK(rows[1] == "gpu,0,0.003,0.0025,0.002,0.5,64,fp32,0.001,,0,0.0015\r");
  CHECK(rows[5] == "gpu,4,0.003,0.0025,0.002,0.5,64,fp16,0.001,65536,1,0.0015\r");
  CHECK(rows[6].rfind("cpu,0,", 0) == 0);

  core::PrecisionRow pr;
  pr.precision = core::Precision::FP16;
  pr.batch = 64;
  pr.kernels = core::KernelTable(0);
  const core::StepPlan p = plan(64);
  core::StepRecord r;
  r.kernel_ms.assign(p.entries.size(), 0.5);
  r.step_ms = 0.5 * static_cast<double>(p.entries.size());
  pr.kernels.add(p, r);
  gpu.precisions.push_back(pr);
  const std::string kernels = core::kernels_csv({gpu, cpu});
  CHECK(kernels.find("gpu,\"llvmpipe, software\",fp16,64,matmul_forward,2,0.5,1,") != std::string::npos);

  core::DevicePeaks peaks;
  peaks.backend = "gpu";
  peaks.device = "dev";
  core::PeakFigure f;
  f.id = "copy_shader";
  f.label = "memory bandwidth: copy shader";
  f.unit = "GB/s";
  f.value = 12.5;
  f.samples = {12, 12.5, 13};
  f.method = "a, b";
  peaks.figures.push_back(f);
  const std::string pc = core::peaks_csv({peaks});
  CHECK(pc.find("gpu,dev,0,0,copy_shader,memory bandwidth: copy shader,12.5,GB/s,12;12.5;13,\"a, b\",") !=
        std::string::npos);
}

TEST_CASE("the CSV directory: created with its missing parents, refused when it or a folder above it is a file") {
  const auto dir = std::filesystem::temp_directory_path() / ("trainscope-csv-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CHECK_NOTHROW(core::check_csv_dir((dir / "new").string(), "--csv"));
  // Issue 25: only the last level was created, so a missing parent failed after the training.
  CHECK_NOTHROW(core::check_csv_dir((dir / "no" / "such").string(), "--csv"));
  core::write_csv_dir((dir / "no" / "such").string(), {}, {});
  for (const char* name : core::kCsvFiles) CHECK(std::filesystem::exists(dir / "no" / "such" / name));
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_WITH_AS(core::check_csv_dir((dir / "file").string(), "--csv"), doctest::Contains("not a directory"),
                       core::Error);
  CHECK_THROWS_WITH_AS(core::check_csv_dir((dir / "file" / "sub").string(), "--csv"),
                       doctest::Contains("not a directory"), core::Error);
  core::write_csv_dir((dir / "new").string(), {}, {});
  for (const char* name : core::kCsvFiles) CHECK(std::filesystem::exists(dir / "new" / name));
  std::filesystem::remove_all(dir);
}
