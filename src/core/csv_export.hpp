// The CSV export (`train --csv DIR`, the dashboard's "Export CSV"): three tables for a spreadsheet or pandas, in RFC
// 4180 CSV (comma-separated, a header line, fields with a comma, quote or line break quoted, quotes doubled):
//   steps.csv    one row per training step and backend: backend, step, wall_seconds (end of the previous step to
//                the end of this one on the backend's clock, gaps included: StepRow::wall_ms), step_seconds (GPU
//                first to last timestamp, CPU wall clock of its kernels; a GPU without timestamps: its share of
//                the wall clock), kernel_seconds (the sum of its kernel times; empty where unavailable), loss, batch, precision, lr, loss_scale (fp16, else empty), skipped (1: fp16 overflow,
//                update skipped);
//   kernels.csv  the kernel table per backend, precision and batch size: calls, mean_ms, total_ms, pct_of_step,
//                gflops, gbps (as core::KernelRow; the first step of each configuration left out);
//   peaks.csv    every measured peak figure per device: value, unit, samples, method (core/peaks.hpp).
#pragma once
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/metrics.hpp"
#include "core/peaks.hpp"

namespace core {

// One CSV field, quoted when it holds a comma, a quote, a line break or leading/trailing spaces.
std::string csv_field(const std::string& text);

std::string steps_csv(const std::vector<BackendRun>& runs);
std::string kernels_csv(const std::vector<BackendRun>& runs);
std::string peaks_csv(const std::vector<DevicePeaks>& peaks);

// The file names write_csv_dir writes, in order.
inline constexpr const char* kCsvFiles[] = {"steps.csv", "kernels.csv", "peaks.csv"};

// Checks before training that `dir` is a directory whose three files can be written (core::check_output_path), or
// that it does not exist yet and the nearest folder above it that does takes files (it is then created at the end,
// with its missing parents). `option` names it ("--csv"). Throws core::Error(InvalidArgument).
void check_csv_dir(const std::string& dir, const std::string& option);

// The three files of `dir` as outputs for core::check_distinct_outputs ("--csv (steps.csv)", "DIR/steps.csv").
std::vector<NamedOutput> csv_dir_outputs(const std::string& dir, const std::string& option);

// Writes the three files into `dir` (created with its missing parents), all or none (core::write_files_atomically:
// a full disk part-way leaves the old files, never old and new mixed). Throws core::Error(Io) naming the file and
// what to do.
void write_csv_dir(const std::string& dir, const std::vector<BackendRun>& runs, const std::vector<DevicePeaks>& peaks);

}  // namespace core
