// KernelTable arithmetic: per-kernel and per-entry sums of measured time and analytic FLOPs/bytes.
#include "core/metrics.hpp"

#include <fmt/format.h>

#include <chrono>

#include "core/error.hpp"

namespace core {

KernelTable::Sum& KernelTable::by_name(const PlanEntry& e) {
  for (size_t i = 0; i < name_ops_.size(); ++i)
    if (name_ops_[i] == std::pair{e.op, e.kind}) return by_name_[i];
  name_ops_.emplace_back(e.op, e.kind);
  by_name_.push_back(Sum{e.kernel()});
  return by_name_.back();
}

KernelTable::Sum& KernelTable::by_entry(const PlanEntry& e) {
  const EntryKey key{e.op, e.layer, e.B, e.C, e.OC, e.N, e.kind};
  for (size_t i = 0; i < entry_keys_.size(); ++i)
    if (entry_keys_[i] == key) return by_entry_[i];
  entry_keys_.push_back(key);
  by_entry_.push_back(Sum{e.label()});
  return by_entry_.back();
}

void KernelTable::add(const StepPlan& plan, const StepRecord& record) {
  if (record.kernel_ms.empty() && !plan.entries.empty()) {  // an untimed step (a device without timestamps)
    ++seen_;
    ++untimed_;
    return;
  }
  if (record.kernel_ms.size() != plan.entries.size())
    throw Error(ErrorKind::Internal, fmt::format("step {}: {} kernel timings for a plan of {} kernels", record.step,
                                                 record.kernel_ms.size(), plan.entries.size()));
  ++seen_;
  if (seen_ <= warmup_) return;
  ++steps_;
  step_ms_ += record.step_ms;
  step_flops_ += plan.total_flops();
  step_bytes_ += plan.total_bytes();
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const PlanEntry& e = plan.entries[i];
    for (Sum* s : {&by_name(e), &by_entry(e)}) {
      ++s->calls;
      s->ms += record.kernel_ms[i];
      s->flops += e.flops;
      s->bytes += e.bytes();
    }
  }
}

KernelRow KernelTable::to_row(const Sum& s) const {
  KernelRow r;
  r.name = s.name;
  r.calls = s.calls;
  r.total_ms = s.ms;
  r.mean_ms = s.calls > 0 ? s.ms / s.calls : 0;
  r.pct_of_step = step_ms_ > 0 ? 100.0 * s.ms / step_ms_ : 0;
  // A kernel faster than the timer's resolution can measure 0 ms: report 0 rather than infinity.
  const double seconds = s.ms * 1e-3;
  r.gflops = seconds > 0 ? s.flops / seconds / 1e9 : 0;
  r.gbps = seconds > 0 ? s.bytes / seconds / 1e9 : 0;
  return r;
}

std::vector<KernelRow> KernelTable::rows() const {
  std::vector<KernelRow> out;
  for (const auto& s : by_name_) out.push_back(to_row(s));
  return out;
}

std::vector<KernelRow> KernelTable::entry_rows() const {
  std::vector<KernelRow> out;
  for (const auto& s : by_entry_) out.push_back(to_row(s));
  return out;
}

KernelRow KernelTable::step_row() const {
  return to_row(Sum{"step (total)", steps_, step_ms_, step_flops_, step_bytes_});
}

double BackendRun::samples_per_s() const {
  double samples = 0, seconds = 0;
  for (const auto& e : epochs) {
    samples += e.samples_per_s * e.seconds;
    seconds += e.seconds;
  }
  return seconds > 0 ? samples / seconds : 0;
}

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace core
