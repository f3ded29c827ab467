// Building the step timeline from StepRecords (timeline.hpp).
#include "core/timeline.hpp"

#include <algorithm>
#include <utility>
#include <fmt/format.h>

namespace core {
namespace {

bool same_plan(const StepPlan& a, const StepPlan& b) {
  return a.batch == b.batch && a.precision == b.precision && a.optimizer == b.optimizer &&
         a.activation == b.activation && a.shape.dims == b.shape.dims && a.entries.size() == b.entries.size();
}

// Events of one track sorted by start, each starting no earlier than the previous one ends (timestamps converted
// to the host's clock can disagree by a rounding step; a track is one queue or thread, so it never runs two at once).
void settle(TimelineTrack& track) {
  std::stable_sort(track.events.begin(), track.events.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
  for (size_t i = 1; i < track.events.size(); ++i) {
    TimelineEvent& e = track.events[i];
    const double prev_end = track.events[i - 1].end_s;
    if (e.start_s < prev_end) {
      const double length = e.end_s - e.start_s;
      e.start_s = prev_end;
      e.end_s = prev_end + length;
    }
  }
}

}  // namespace

double BackendTimeline::busy_share() const {
  double busy = 0, wall = 0;
  for (const StepBreakdown& s : steps) busy += s.busy_s, wall += s.wall_s;
  return wall > 0 ? std::min(1.0, busy / wall) : 0;
}

void TimelineRecorder::set_capacity(size_t steps) {
  capacity_ = std::max<size_t>(1, steps);
  while (steps_.size() > capacity_) steps_.pop_front();
}

void TimelineRecorder::add(const StepPlan& plan, const StepRecord& record) {
  if (record.kernel_ms.size() != plan.entries.size()) return;
  std::shared_ptr<const StepPlan> p;
  if (!steps_.empty() && same_plan(*steps_.back().plan, plan))
    p = steps_.back().plan;
  else
    p = std::make_shared<const StepPlan>(plan);
  steps_.push_back({std::move(p), record, std::exchange(break_, false)});
  while (steps_.size() > capacity_) steps_.pop_front();
}

namespace {

// --input host: the loader threads' spans of one step, a track per loader thread (made as the threads appear).
void add_loader_spans(std::vector<TimelineTrack>& loaders, const StepRecord& r) {
  for (const LoaderSpan& l : r.loader) {
    if (l.thread < 0) continue;
    for (size_t k = loaders.size(); k <= static_cast<size_t>(l.thread); ++k)
      loaders.push_back({fmt::format("loader {}", k + 1), TrackKind::Loader, {}});
    loaders[static_cast<size_t>(l.thread)].events.push_back(
        {kLoadBatch, fmt::format("assembling the batch of step {}", r.step + 1), l.start_s, l.end_s, r.step, -1, 0, 0});
  }
}

// The CPU pool's threads 1..n: their spans of each kernel of one step, a track per thread.
void add_thread_spans(std::vector<TimelineTrack>& workers, const StepPlan& plan, const StepRecord& r) {
  for (const ThreadSpan& ts : r.threads) {
    if (ts.thread <= 0 || ts.entry < 0 || ts.entry >= static_cast<int>(plan.entries.size())) continue;
    if (workers.size() < static_cast<size_t>(ts.thread))
      for (size_t k = workers.size() + 1; k <= static_cast<size_t>(ts.thread); ++k)
        workers.push_back({fmt::format("thread {}", k), TrackKind::CpuThread, {}});
    const PlanEntry& e = plan.entries[static_cast<size_t>(ts.entry)];
    workers[static_cast<size_t>(ts.thread) - 1].events.push_back(
        {e.kernel(), e.label(), ts.start_s, ts.end_s, r.step, ts.entry, e.flops, e.bytes()});
  }
}

// Each track settled (settle), and the timeline's extent: from its first event's start to its last one's end.
void settle_tracks(BackendTimeline& t) {
  bool first = true;
  for (auto& track : t.tracks) {
    settle(track);
    for (const auto& e : track.events) {
      t.start_s = first ? e.start_s : std::min(t.start_s, e.start_s);
      t.end_s = first ? e.end_s : std::max(t.end_s, e.end_s);
      first = false;
    }
  }
}

}  // namespace

BackendTimeline TimelineRecorder::timeline(const std::string& backend, const std::string& device) const {
  BackendTimeline t;
  t.backend = backend;
  t.device = device;
  if (steps_.empty()) return t;
  t.batch = steps_.back().plan->batch;
  t.precision = steps_.back().plan->precision;
  const bool gpu = backend == "gpu";

  // The kernels' own track: the GPU queue, or the CPU's calling thread (which runs every kernel start to end).
  TimelineTrack kernels{gpu ? "GPU queue" : "thread 0 (trainer)", gpu ? TrackKind::GpuQueue : TrackKind::CpuThread, {}};
  TimelineTrack host{"host (trainer thread)", TrackKind::Host, {}};
  TimelineTrack upload{"upload (host)", TrackKind::Upload, {}};
  std::vector<TimelineTrack> workers;  // CPU pool threads 1..n
  std::vector<TimelineTrack> loaders;  // --input host: loader threads 0..n-1

  double previous_end = 0;
  for (const Step& s : steps_) {
    const StepPlan& plan = *s.plan;
    const StepRecord& r = s.record;
    const double base = r.start_s > 0 ? r.start_s : previous_end;
    StepBreakdown b;
    b.step = r.step;
    b.batch = plan.batch;
    b.precision = plan.precision;
    double offset_ms = 0, first_start = 0, last_end = 0;
    for (size_t i = 0; i < plan.entries.size(); ++i) {
      const PlanEntry& e = plan.entries[i];
      const double start_ms = r.kernel_start_ms.size() == plan.entries.size() ? r.kernel_start_ms[i] : offset_ms;
      TimelineEvent ev{e.kernel(), e.label(), base + start_ms * 1e-3, base + (start_ms + r.kernel_ms[i]) * 1e-3,
                       r.step, static_cast<int>(i), e.flops, e.bytes()};
      offset_ms = start_ms + r.kernel_ms[i];
      b.kernel_s += r.kernel_ms[i] * 1e-3;
      if (!e.transfer()) b.busy_s += r.kernel_ms[i] * 1e-3;
      if (i == 0) first_start = ev.start_s;
      last_end = std::max(last_end, ev.end_s);
      kernels.events.push_back(std::move(ev));
    }
    for (const HostSpan& h : r.host) {
      (h.phase == HostPhase::Upload ? upload : host)
          .events.push_back({to_string(h.phase), "", h.start_s, h.end_s, r.step, -1, 0, 0});
      b.host_s += h.end_s - h.start_s;
    }
    add_loader_spans(loaders, r);
    add_thread_spans(workers, plan, r);
    b.wall_s = previous_end > 0 && previous_end <= last_end && &s != &steps_.front() && !s.after_break
                   ? last_end - previous_end
                   : last_end - first_start;
    previous_end = last_end;
    t.steps.push_back(b);
  }
  t.tracks.push_back(std::move(kernels));
  if (!host.events.empty()) t.tracks.push_back(std::move(host));
  if (!upload.events.empty()) t.tracks.push_back(std::move(upload));
  for (auto& l : loaders) t.tracks.push_back(std::move(l));
  for (auto& w : workers) t.tracks.push_back(std::move(w));
  settle_tracks(t);
  return t;
}

}  // namespace core
