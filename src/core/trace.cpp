// Chrome trace-event JSON from step timelines (trace.hpp).
#include "core/trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/files.hpp"

namespace core {
namespace {

// Microseconds from `origin` rounded to whole nanoseconds, as a double: ts and ts + dur of consecutive events stay
// exactly ordered after rounding (both ends are rounded, and dur is their difference).
long long to_ns(double seconds, double origin) { return std::llround((seconds - origin) * 1e9); }
double ns_to_us(long long ns) { return static_cast<double>(ns) / 1e3; }

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  return {{"name", name}, {"ph", "M"}, {"ts", 0}, {"dur", 0}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

nlohmann::json trace_json(const std::vector<BackendTimeline>& timelines, const nlohmann::json& other_data) {
  double origin = std::numeric_limits<double>::infinity();
  for (const auto& t : timelines)
    if (!t.tracks.empty() && !t.empty()) origin = std::min(origin, t.start_s);
  if (!std::isfinite(origin)) origin = 0;

  nlohmann::json events = nlohmann::json::array();
  for (size_t b = 0; b < timelines.size(); ++b) {
    const BackendTimeline& t = timelines[b];
    const int pid = static_cast<int>(b) + 1;
    std::unordered_map<long, size_t> step_index;  // step -> its StepBreakdown
    for (size_t i = 0; i < t.steps.size(); ++i) step_index[t.steps[i].step] = i;
    const std::string process = (t.backend == "gpu" ? "GPU: " : t.backend == "cpu" ? "CPU: " : t.backend + ": ") +
                                t.device;
    events.push_back(metadata("process_name", pid, 0, {{"name", process}}));
    events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    for (size_t k = 0; k < t.tracks.size(); ++k) {
      const TimelineTrack& track = t.tracks[k];
      const int tid = static_cast<int>(k) + 1;
      events.push_back(metadata("thread_name", pid, tid, {{"name", track.name}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
      for (const TimelineEvent& e : track.events) {
        const long long start = to_ns(e.start_s, origin), end = to_ns(e.end_s, origin);
        nlohmann::json args = {{"step", e.step}};
        if (const auto s = step_index.find(e.step); s != step_index.end()) {
          args["batch"] = t.steps[s->second].batch;
          args["precision"] = to_string(t.steps[s->second].precision);
        }
        if (e.entry >= 0) {
          args["label"] = e.label;
          args["flops"] = e.flops;
          args["bytes"] = e.bytes;
        }
        const bool transfer = e.name == PlanEntry::kUploadBatch;  // --input host: the batch copied host to device
        events.push_back({{"name", e.name},
                          {"cat", transfer ? "transfer" : e.entry >= 0 ? "kernel" : track.kind == TrackKind::Loader ? "loader" : "host"},
                          {"ph", "X"},
                          {"ts", ns_to_us(start)},
                          {"dur", ns_to_us(std::max(0LL, end - start))},
                          {"pid", pid},
                          {"tid", tid},
                          {"args", std::move(args)}});
      }
    }
    // The device's busy share per step (StepBreakdown::busy_share: kernel time over wall time), as a counter track
    // at each step's end: Perfetto draws it as a graph under the process.
    if (!t.tracks.empty())
      for (size_t i = 0; i < t.steps.size(); ++i) {
        const StepBreakdown& s = t.steps[i];
        double end_s = -1;
        for (const TimelineEvent& e : t.tracks.front().events)
          if (e.step == s.step) end_s = std::max(end_s, e.end_s);
        if (end_s < 0) continue;
        events.push_back({{"name", t.backend == "gpu" ? "GPU busy %" : "busy %"},
                          {"ph", "C"},
                          {"ts", ns_to_us(to_ns(end_s, origin))},
                          {"dur", 0},
                          {"pid", pid},
                          {"tid", 0},
                          {"args", {{"percent", 100 * s.busy_share()}}}});
      }
  }
  nlohmann::json j = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  if (!other_data.is_null()) j["otherData"] = other_data;
  return j;
}

nlohmann::json trace_json(const std::vector<BackendTimeline>& timelines) { return trace_json(timelines, nullptr); }

void write_trace(const std::string& path, const std::vector<BackendTimeline>& timelines,
                 const nlohmann::json& other_data) {
  write_file_atomically(path, trace_json(timelines, other_data).dump() + "\n", "the trace");
}

void write_trace(const std::string& path, const std::vector<BackendTimeline>& timelines) {
  write_trace(path, timelines, nullptr);
}

}  // namespace core
