// The host memory budget (memory_budget.hpp): the machine's available memory from /proc/meminfo and the memory
// cgroups, the TRAINSCOPE_MEMORY_LIMIT override, and a training run's need from its shapes.
#include "core/memory_budget.hpp"
#include "core/run_plan.hpp"

#include "core/input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/cgroups.hpp"
#include "core/error.hpp"
#include "core/step_plan.hpp"
#include "core/tensor_layout.hpp"
#include "core/trainer.hpp"
#include "platform/system.hpp"

namespace core {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The number at the start of `text` ("3221225472\n"), or a negative one (absent, "max").
double number_in(const std::string& text) {
  double v = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && ptr != text.data() ? v : -1;
}

// The value of `key` in a "key value" file (memory.stat), or 0.
double stat_value(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string k;
  double v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

void take(HostMemory& h, double bytes, std::string source, bool address_space = false) {
  if (bytes < 0 || bytes >= h.available) return;
  h.available = bytes, h.source = std::move(source), h.address_space = address_space;
}

// Every memory cgroup level from this process's up to the root, v2 ("0::/a/b") and v1 ("4:memory:/a/b").
void from_cgroups(HostMemory& h, const std::string& root) {
  for_each_cgroup_level(root, "memory", [&](const std::string& dir, const std::string& path, bool v2) {
    const double limit = number_in(read_text(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes")));
    if (limit < 0 || limit >= 1e18) return;  // none; v1 says "no limit" with a number near 2^63
    const std::string stat = read_text(dir + "/memory.stat");
    const double used = std::max(0.0, number_in(read_text(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"))) -
                                          stat_value(stat, v2 ? "inactive_file" : "total_inactive_file"));
    take(h, std::max(0.0, limit - used),
         fmt::format("the memory cgroup {} (limit {}, {} in use)", path, memory_text(limit), memory_text(used)));
  });
}

// The address-space limit (ulimit -v): every mapping counts against it, so what is left is the limit less what this
// process maps already (VmSize in /proc/self/status: the program, its libraries, a Vulkan driver's, thread stacks).
void from_address_space(HostMemory& h, const std::string& root, double limit) {
  if (limit < 0) return;
  const std::string status = read_text(root + "/proc/self/status");
  double mapped = 0;
  if (const size_t at = status.find("VmSize:"); at != std::string::npos)
    mapped = std::max(0.0, number_in(status.substr(status.find_first_not_of(" \t", at + 7)))) * 1024;
  take(h, std::max(0.0, limit - mapped),
       fmt::format("the address-space limit of this process ({} by ulimit -v / RLIMIT_AS, {} of it mapped already; "
                   "raise it with ulimit -v)",
                   memory_text(limit), memory_text(mapped)),
       true);
}

}  // namespace

MemoryNeed& MemoryNeed::add(std::string what, double bytes) {
  if (bytes > 0) parts.push_back({std::move(what), bytes});
  return *this;
}

double MemoryNeed::total() const {
  double t = 0;
  for (const Part& p : parts) t += p.bytes;
  return t;
}

std::string MemoryNeed::describe() const {
  std::string list;
  for (const Part& p : parts) list += fmt::format("{}{}: {}", list.empty() ? "" : ", ", p.what, memory_text(p.bytes));
  return list;
}

std::string memory_text(double bytes) {
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  return fmt::format("{:.0f} MiB", std::ceil(bytes / (1 << 20)));
}

std::pair<std::string, std::string> distinct_memory_texts(double a, double b) {
  std::pair<std::string, std::string> out{memory_text(a), memory_text(b)};
  if (out.first != out.second || a == b) return out;
  for (int digits = 2; digits <= 3; ++digits) {
    const double unit = std::max(a, b) >= kGiB ? kGiB : double(1 << 20);
    const char* name = unit == kGiB ? "GiB" : "MiB";
    out = {fmt::format("{:.{}f} {}", a / unit, digits, name), fmt::format("{:.{}f} {}", b / unit, digits, name)};
    if (out.first != out.second) return out;
  }
  return {fmt::format("{:.0f} bytes", a), fmt::format("{:.0f} bytes", b)};
}

double parse_memory_size(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0) return -1;
  std::string unit(ptr, text.data() + text.size());
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();  // "3GB", "3GiB" as 3G
  if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.pop_back();
  double scale = 0;
  if (unit.empty())
    scale = 1;
  else if (unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "M" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    scale = kGiB;
  else if (unit == "T" || unit == "t")
    scale = kGiB * 1024;
  return scale > 0 ? value * scale : -1;
}

HostMemory host_memory(const std::string& root, double address_space_limit) {
  HostMemory h;
  h.available = std::numeric_limits<double>::infinity();
  h.source = "unknown (no /proc/meminfo)";
  const std::string meminfo = read_text(root + "/proc/meminfo");
  if (const size_t at = meminfo.find("MemAvailable:"); at != std::string::npos)
    take(h, number_in(meminfo.substr(meminfo.find_first_not_of(' ', at + 13))) * 1024, "MemAvailable in /proc/meminfo");
  else if (root.empty() && meminfo.empty())  // a system without /proc (Windows, macOS): ask it
    take(h, platform::available_memory_bytes(), "the system's available physical memory");
  from_cgroups(h, root);
  from_address_space(h, root, root.empty() ? platform::address_space_limit_bytes() : address_space_limit);
  if (!root.empty()) return h;
  if (const char* env = std::getenv("TRAINSCOPE_MEMORY_LIMIT"); env && *env) {
    const double limit = parse_memory_size(env);
    if (limit > 0) {
      take(h, limit, fmt::format("TRAINSCOPE_MEMORY_LIMIT={}", env));
    } else {
      static std::once_flag warned;
      std::call_once(warned, [&] {
        std::fprintf(stderr,
                     "trainscope: warning: TRAINSCOPE_MEMORY_LIMIT=%s is not a size (e.g. 3G, 512M, 3GiB); "
                     "ignored\n",
                     env);
      });
    }
  }
  return h;
}

void check_host_memory(const MemoryNeed& need, std::string_view subject, std::string_view todo,
                       const HostMemory& host) {
  const double usable = host.available - kProgramBytes;
  if (need.total() <= usable) return;
  // Two figures that would read the same once rounded ("needs 2.1 GiB ... 2.1 GiB is available") get more digits.
  if (usable <= 0)  // a tiny ulimit -v or cgroup: no smaller model helps ("needs 0 MiB ... 0 MiB is available")
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{}: too little host memory for trainscope itself: {} is available ({}), and it keeps {} "
                            "for itself and its libraries; free memory or raise the limit",
                            subject, memory_text(std::max(0.0, host.available)), host.source,
                            memory_text(kProgramBytes)));
  const auto [needed, left] = distinct_memory_texts(need.total(), usable);
  // Nothing to allocate, but too little even for trainscope itself (a tiny ulimit -v): no empty "()".
  const std::string parts = need.parts.empty() ? "" : fmt::format(" ({})", need.describe());
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("{}: needs {} of host memory{}, but {} is available ({}, less {} for trainscope "
                          "itself); {}",
                          subject, needed, parts, left, host.source, memory_text(kProgramBytes), todo));
}

void check_host_memory(const MemoryNeed& need, std::string_view subject, std::string_view todo) {
  check_host_memory(need, subject, todo, host_memory());
}

std::string out_of_memory_text(std::string_view doing) {
  const std::string todo = "use smaller --batch or --hidden sizes, or train one backend (--backend cpu or gpu)";
  try {
    const HostMemory h = host_memory();
    const std::string left = std::isinf(h.available) ? "" : fmt::format(": {} was left by ", memory_text(h.available));
    return fmt::format("out of memory {}: an allocation failed that the memory check did not foresee (what bounds "
                       "it{}{}); {}",
                       doing, left.empty() ? ": " : left, h.source, todo);
  } catch (const std::bad_alloc&) {  // too little memory left even to say it well
    return "out of memory: an allocation failed; " + todo;
  }
}

std::vector<NewTrainer> new_trainers(const TrainConfig& c, bool gpu_on_host) {
  std::vector<NewTrainer> out;
  for (const std::string& b : c.backends) out.push_back({b, b != "gpu" || gpu_on_host});
  return out;
}

MemoryNeed training_memory_need(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers) {
  MemoryNeed need;
  // The trainers' own plan and tensor layout in fp32 (what they allocate, from the sizes alone), with the dataset
  // copy: every storage precision holds at most its bytes, plus the 16-bit CPU arena added below.
  const RunPlan run = run_plan(c, data, Precision::FP32);
  const ModelShape& shape = run.shape;
  const StepPlan& plan = run.plan;
  const MemoryUsage fp32 = run.layout.usage(true);
  double largest_operands = 0, largest_b = 0;  // floats of a GEMM's three operands; of its B operand
  for (const PlanEntry& e : plan.entries) {
    if (e.op != Op::matmul_forward && e.op != Op::matmul_backward_data && e.op != Op::matmul_backward_weight) continue;
    const double in = double(e.B) * double(e.C), weight = double(e.OC) * double(e.C), out = double(e.B) * double(e.OC);
    largest_operands = std::max(largest_operands, in + weight + out);
    largest_b = std::max(largest_b, e.op == Op::matmul_backward_weight ? in : weight);
  }
  for (const NewTrainer& t : trainers) {
    if (!t.on_host) continue;
    if (t.backend == "cpu") {
      const unsigned threads =
          c.threads > 0 ? static_cast<unsigned>(c.threads) : std::max(1u, std::thread::hardware_concurrency());
      double bytes = static_cast<double>(fp32.total() - fp32.dataset) + 4 * largest_b + threads * 2.0 * (1 << 20);
      if (c.precision != Precision::FP32) bytes += 4 * largest_operands;
      need.add("CPU trainer", bytes);
    } else {
      // + 1 MiB: its placeholders, staging and query buffers, which the fp32 figure leaves out.
      need.add("GPU trainer (software Vulkan: its device memory is host memory)",
               static_cast<double>(fp32.total()) + (1 << 20));
    }
  }
  // --input host: per trainer, its loader's prefetch + 1 batches and, for a GPU, the staging of its steps in flight
  // (the pinned ring, or one pageable buffer at a time): host memory on every device.
  if (c.input.host()) {
    const double batch = static_cast<double>(batch_upload_bytes(c.batch, shape.inputs(), Precision::FP32));
    for (const NewTrainer& t : trainers) {
      const double staging = t.backend != "gpu" ? 0 : c.input.pageable ? 1 : c.readback_interval;
      need.add(t.backend == "gpu" ? "GPU loader and staging" : "CPU loader", (c.input.prefetch + 1 + staging) * batch);
    }
  }
  return need;
}

void check_training_memory(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers,
                           const HostMemory& host, const MemoryNeed& extra) {
  const bool two = trainers.size() > 1;
  MemoryNeed need = training_memory_need(c, data, trainers);
  for (const MemoryNeed::Part& p : extra.parts) need.add(p.what, p.bytes);
  // Under an address-space limit a software Vulkan driver maps more than it uses once it compiles (LLVM's code, its
  // threads' stacks), and lavapipe segfaults when a mapping fails (kDriverAddressSpaceBytes).
  const bool software_gpu = std::any_of(trainers.begin(), trainers.end(),
                                        [](const NewTrainer& t) { return t.backend == "gpu" && t.on_host; });
  if (host.address_space && software_gpu)
    need.add("the software Vulkan driver's mappings (its compiler and threads)", kDriverAddressSpaceBytes);
  const bool window = !extra.parts.empty();
  check_host_memory(need, window ? "--hidden/--batch/--size: this run" : "--hidden/--batch: this run",
                    fmt::format("use smaller layers or batches{}{}", window ? ", a smaller --size" : "",
                                two ? ", or train one backend (--backend cpu or gpu)" : ""),
                    host);
}

void check_training_memory(const TrainConfig& c, const DataSplit& data, const std::vector<NewTrainer>& trainers,
                           const MemoryNeed& extra) {
  check_training_memory(c, data, trainers, host_memory(), extra);
}

MemoryNeed picture_memory_need(int width, int height, std::string_view what) {
  const double picture = 4.0 * static_cast<double>(width) * static_cast<double>(height);
  MemoryNeed need;
  need.add(fmt::format("{} {}x{}, about 4 copies of {}", what, width, height, memory_text(picture)), 4.5 * picture);
  return need;
}

}  // namespace core
