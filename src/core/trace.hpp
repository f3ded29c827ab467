// The trace export (`train --trace FILE.json`, the dashboard's "Export trace"): step timelines in the Chrome
// trace-event format (the JSON that PyTorch's profiler exports and that Perfetto and chrome://tracing open;
// "Trace Event Format", Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
//
// Layout: one process per backend (pid 1, 2, ... named "GPU: <device>", "CPU: <device>"), one thread per track (the GPU
// queue, the host, each CPU pool thread), one complete event ("ph": "X") per kernel dispatch or kernel span of a thread
// and per host phase, with args {step, label, flops, bytes, batch, precision}. ts and dur are microseconds with
// nanosecond resolution, from the earliest event of all backends (both backends share the host's steady clock, so
// what ran at the same time lines up). The metadata events ("ph": "M": process_name, thread_name, sort indices) carry
// ts 0 and dur 0 too, so every event has name, ph, ts, dur, pid and tid.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // the full header only where JSON is built or read (build time)

#include "core/timeline.hpp"

namespace core {

// The trace as JSON: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": other_data}. Empty timelines give
// only their metadata events; without other_data (or a null one) there is no "otherData".
nlohmann::json trace_json(const std::vector<BackendTimeline>& timelines);
nlohmann::json trace_json(const std::vector<BackendTimeline>& timelines, const nlohmann::json& other_data);

// Writes trace_json() to `path` atomically (core::write_file_atomically: temporary file + rename; "-": standard
// output). Throws core::Error(Io) naming the path and what to do.
void write_trace(const std::string& path, const std::vector<BackendTimeline>& timelines);
void write_trace(const std::string& path, const std::vector<BackendTimeline>& timelines,
                 const nlohmann::json& other_data);

}  // namespace core
