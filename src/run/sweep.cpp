// The batch-size sweep: one fresh trainer per (batch size, backend, thread count) from the same initial weights,
// warm-up steps, then timed steps by the wall clock; the crossover from the measured samples/s.
#include "run/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/batches.hpp"
#include "core/error.hpp"
#include "core/memory_budget.hpp"
#include "core/model.hpp"
#include "core/thread_budget.hpp"
#include "run/explain.hpp"
#include "run/preflight.hpp"
#include "run/validate.hpp"

namespace run {
namespace {

using Clock = std::chrono::steady_clock;

std::string series_name(const std::string& backend, int threads, bool several_thread_counts) {
  if (backend != "cpu" || !several_thread_counts) return backend;
  return threads == 0 ? "cpu all threads" : fmt::format("cpu {} thread{}", threads, threads == 1 ? "" : "s");
}

// Trains `steps` steps of trainer t from position `next` of the epoch's order (wrapping to the order's start), and
// waits for all of them to be read back.
void train_steps(core::Trainer& t, int steps, int batch, int per_epoch, long& next) {
  for (int i = 0; i < steps; ++i) {
    t.step(static_cast<size_t>(next % per_epoch) * static_cast<size_t>(batch));
    ++next;
  }
  t.flush();
}

SweepPoint measure(const SweepOptions& o, const core::DataSplit& data, const BackendSpec& spec, int batch,
                   int threads, const std::vector<float>& init, const std::vector<uint32_t>& order) {
  SweepPoint p;
  p.backend = spec.name;
  p.batch = batch;
  p.threads = spec.name == "cpu" ? threads : 0;
  core::TrainConfig cfg = o.config;
  cfg.batch = batch;
  cfg.threads = p.threads;
  cfg.epochs = 1;
  if (batch > data.train.count) {
    p.skipped = fmt::format("batch {} > the {} training samples", batch, data.train.count);
    return p;
  }
  try {
    run::preflight(cfg, data, {{spec.name, spec.host_memory}});  // one trainer at a time
    std::unique_ptr<core::Trainer> t = spec.make(cfg, data, init);
    p.device = t->device_name();
    t->begin_epoch(order);
    const int per_epoch = core::steps_per_epoch(data.train.count, batch);
    long next = 0;
    train_steps(*t, o.warmup_steps, batch, per_epoch, next);
    const auto start = Clock::now();
    train_steps(*t, o.timed_steps, batch, per_epoch, next);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    p.steps = o.timed_steps;
    const double per_step = s / o.timed_steps;
    p.ms_per_step = per_step * 1e3;
    if (per_step > 0) {
      p.samples_per_s = batch / per_step;
      p.gflops = t->plan().total_flops() / per_step * 1e-9;
      p.gbps = t->plan().total_bytes() / per_step * 1e-9;
    }
  } catch (const std::bad_alloc&) {
    p.skipped = "out of memory";
    p.failed = true;
  } catch (const core::Error& e) {
    p.skipped = explain(e);
    p.failed =
        e.kind() != core::ErrorKind::InvalidArgument;  // a size this machine cannot take is a skip, not a failure
  }
  return p;
}

}  // namespace

std::vector<int> default_sweep_batches() {
  std::vector<int> b;
  for (int v = 1; v <= 4096; v *= 2) b.push_back(v);
  return b;
}

double SweepResult::speedup(int batch) const {
  const std::vector<std::string> s = series();
  const auto cpu = std::find_if(s.begin(), s.end(), [](const std::string& n) { return n.rfind("cpu", 0) == 0; });
  if (cpu == s.end()) return 0;
  const SweepPoint* g = find("gpu", batch);
  const SweepPoint* c = find(*cpu, batch);
  if (!g || !c || !g->measured() || !c->measured() || c->samples_per_s <= 0) return 0;
  return g->samples_per_s / c->samples_per_s;
}

const SweepPoint* SweepResult::find(const std::string& series, int batch) const {
  for (const auto& p : points)
    if (p.series == series && p.batch == batch) return &p;
  return nullptr;
}

std::vector<std::string> SweepResult::series() const {
  std::vector<std::string> out;
  for (const auto& p : points)
    if (std::find(out.begin(), out.end(), p.series) == out.end()) out.push_back(p.series);
  return out;
}

void find_crossover(SweepResult& r) {
  r.crossover.reset();
  r.software_gpu = false;
  std::vector<int> batches;
  for (const auto& p : r.points) {
    if (p.backend == "gpu" && p.device.find("software Vulkan") != std::string::npos) r.software_gpu = true;
    if (std::find(batches.begin(), batches.end(), p.batch) == batches.end()) batches.push_back(p.batch);
  }
  std::sort(batches.begin(), batches.end());
  int compared = 0;
  for (int b : batches) {
    const double s = r.speedup(b);
    if (s <= 0) continue;
    ++compared;
    if (s > 1) {
      r.crossover = b;
      break;
    }
  }
  if (r.crossover) {
    r.crossover_text = fmt::format("batch {}: the smallest batch size at which the GPU trains more samples/s", *r.crossover);
  } else if (compared == 0) {
    r.crossover_text = "none: the GPU and the CPU were not both measured at any batch size";
  } else if (r.software_gpu) {
    r.crossover_text = "none on this machine: the CPU was faster at every batch size measured. Its \"GPU\" is a "
                       "software Vulkan device (lavapipe), which runs the shaders on these same CPU cores, so it "
                       "cannot outrun the CPU backend; on a real GPU the crossover appears";
  } else {
    r.crossover_text = "none on this machine: the CPU was faster at every batch size measured (try larger batch "
                       "sizes or a larger model)";
  }
}

void check_sweep_memory(const SweepOptions& o, const core::DataSplit& data, const std::vector<BackendSpec>& backends) {
  if (o.batches.empty()) return;
  // The initial weights are kept for the whole sweep, beside one trainer at a time: if not even the smallest point
  // fits beside them, nothing is measured (the points that do not fit are skipped one by one).
  core::TrainConfig smallest = o.config;
  smallest.batch = std::min(*std::min_element(o.batches.begin(), o.batches.end()), data.train.count);
  core::validate_against_data(smallest, data);
  core::MemoryNeed need;
  need.add("the initial weights", 4.0 * static_cast<double>(core::model_shape(o.config, data).param_count));
  double trainer = 0;
  for (const auto& spec : backends) {
    smallest.backends = {spec.name};
    trainer = std::max(trainer, core::training_memory_need(smallest, data, {{spec.name, spec.host_memory}}).total());
  }
  need.add(fmt::format("one trainer at batch {}", smallest.batch), trainer);
  core::check_host_memory(need, "--hidden: this sweep", "use smaller layers");
}

SweepResult run_sweep(const SweepOptions& o, const core::DataSplit& data, const std::vector<BackendSpec>& backends,
                      const SweepProgress& progress, const std::atomic<bool>* stop) {
  if (o.timed_steps < 1 || o.warmup_steps < 0)
    throw core::Error(core::ErrorKind::InvalidArgument, "sweep: at least 1 timed step and no negative warm-up");
  const std::vector<int> threads = o.cpu_threads.empty() ? std::vector<int>{o.config.threads} : o.cpu_threads;
  const bool several = threads.size() > 1;
  check_sweep_memory(o, data, backends);
  const core::ModelShape shape = core::model_shape(o.config, data);
  const std::vector<float> init = core::init_parameters(shape, o.config.seed);
  const std::vector<uint32_t> order = core::epoch_order(data.train.count, o.config.seed, 0);
  size_t total = 0;
  for (const auto& spec : backends) total += o.batches.size() * (spec.name == "cpu" ? threads.size() : 1);
  SweepResult r;
  std::vector<std::string> failed(backends.size());  // a backend that could not be made is not tried again
  for (int batch : o.batches)
    for (size_t s = 0; s < backends.size(); ++s)
      for (int th : backends[s].name == "cpu" ? threads : std::vector<int>{0}) {
        if (stop && stop->load()) {
          r.stopped = true;
          find_crossover(r);
          return r;
        }
        SweepPoint p;
        if (!failed[s].empty()) {
          p.backend = backends[s].name;
          p.batch = batch;
          p.threads = th;
          p.skipped = failed[s];
          p.failed = true;
        } else {
          p = measure(o, data, backends[s], batch, th, init, order);
          // A device that is missing fails the same way at every size: say so once and skip the rest.
          if (!p.measured() && p.device.empty() && p.skipped.find("Vulkan") != std::string::npos) failed[s] = p.skipped;
        }
        p.series = series_name(p.backend, th, several);
        r.points.push_back(p);
        if (progress) progress(r.points.back(), r.points.size(), total);
      }
  find_crossover(r);
  return r;
}

nlohmann::json sweep_json(const SweepOptions& o, const SweepResult& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points)
    points.push_back({{"series", p.series},
                      {"backend", p.backend},
                      {"batch", p.batch},
                      {"threads", p.threads},
                      {"device", p.device},
                      {"steps", p.steps},
                      {"ms_per_step", p.ms_per_step},
                      {"samples_per_s", p.samples_per_s},
                      {"gflops", p.gflops},
                      {"gbps", p.gbps},
                      {"skipped", p.skipped},
                      {"failed", p.failed}});
  nlohmann::json speedups = nlohmann::json::array();
  for (int b : o.batches)
    if (const double s = r.speedup(b); s > 0) speedups.push_back({{"batch", b}, {"speedup", s}});
  nlohmann::json j;
  j["config"] = {{"dataset", o.config.dataset},
                 {"hidden", o.config.hidden},
                 {"activation", core::to_string(o.config.activation)},
                 {"optimizer", core::to_string(o.config.optimizer)},
                 {"precision", core::to_string(o.config.precision)},
                 {"execution", core::to_string(o.config.execution)},
                 {"batches", o.batches},
                 {"threads", o.cpu_threads},
                 {"warmup_steps", o.warmup_steps},
                 {"timed_steps", o.timed_steps},
                 {"seed", o.config.seed}};
  j["points"] = points;
  j["speedup"] = speedups;
  j["crossover"] = r.crossover ? nlohmann::json(*r.crossover) : nlohmann::json(nullptr);
  j["crossover_text"] = r.crossover_text;
  j["software_gpu"] = r.software_gpu;
  j["stopped"] = r.stopped;
  return j;
}

std::string sweep_csv(const SweepResult& r) {
  // Fields never contain commas except the reason for a skip, which is quoted (RFC 4180: quotes doubled).
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out = "series,backend,batch,threads,steps,ms_per_step,samples_per_s,gflops,gbps,speedup,skipped\n";
  for (const auto& p : r.points) {
    const double s = p.backend == "gpu" ? r.speedup(p.batch) : 0;
    out += fmt::format("{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{}\n", p.series, p.backend, p.batch, p.threads,
                       p.steps, p.ms_per_step, p.samples_per_s, p.gflops, p.gbps,
                       s > 0 ? fmt::format("{:.4g}", s) : std::string(), quoted(p.skipped));
  }
  return out;
}

}  // namespace run
