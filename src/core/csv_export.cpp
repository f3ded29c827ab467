// steps.csv, kernels.csv and peaks.csv (csv_export.hpp).
#include "core/csv_export.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "core/files.hpp"

namespace core {
namespace {

// Shortest text that reads back as the same float / double ("0.001", not "0.0010000000474974513").
std::string number(double v) { return fmt::format("{}", v); }
std::string number(float v) { return fmt::format("{}", v); }

std::string join(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  return line + "\r\n";  // RFC 4180 line ends
}

}  // namespace

std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string steps_csv(const std::vector<BackendRun>& runs) {
  std::string out = join({"backend", "step", "wall_seconds", "step_seconds", "kernel_seconds", "loss", "batch",
                          "precision", "lr", "loss_scale", "skipped", "busy_seconds"});
  for (const BackendRun& run : runs)
    for (const StepRow& s : run.step_rows)
      out += join({run.name, std::to_string(s.step), number(double(s.wall_ms) * 1e-3),
                   number(double(s.step_ms) * 1e-3), s.kernels_timed ? number(double(s.kernel_ms) * 1e-3) : "",
                   number(s.loss), std::to_string(s.batch), to_string(s.precision), number(s.lr),
                   s.loss_scale > 0 ? number(s.loss_scale) : "", s.skipped ? "1" : "0",
                   s.kernels_timed ? number(double(s.busy_ms) * 1e-3) : ""});
  return out;
}

std::string kernels_csv(const std::vector<BackendRun>& runs) {
  std::string out = join({"backend", "device", "precision", "batch", "kernel", "calls", "mean_ms", "total_ms",
                          "pct_of_step", "gflops", "gbps"});
  for (const BackendRun& run : runs)
    for (const PrecisionRow& p : run.precisions)
      for (const KernelRow& k : p.kernels.rows())
        out += join({run.name, run.device, to_string(p.precision), std::to_string(p.batch), k.name,
                     std::to_string(k.calls), number(k.mean_ms), number(k.total_ms), number(k.pct_of_step),
                     number(k.gflops), number(k.gbps)});
  return out;
}

std::string peaks_csv(const std::vector<DevicePeaks>& peaks) {
  std::string out = join({"backend", "device", "software", "threads", "figure", "label", "value", "unit", "samples",
                          "method", "note", "measured_at", "load_average"});
  for (const DevicePeaks& p : peaks)
    for (const PeakFigure& f : p.figures) {
      std::string samples;
      for (size_t i = 0; i < f.samples.size(); ++i) {
        if (i) samples += ';';
        samples += number(f.samples[i]);
      }
      out += join({p.backend, p.device, p.software ? "1" : "0", std::to_string(p.threads), f.id, f.label,
                   f.value > 0 ? number(f.value) : "", f.unit, samples, f.method, f.note, p.measured_at,
                   p.load_average >= 0 ? fmt::format("{:.2f}", p.load_average) : ""});
    }
  return out;
}

void check_csv_dir(const std::string& dir, const std::string& option) {
  check_output_dir(dir, option, {std::begin(kCsvFiles), std::end(kCsvFiles)});
}

std::vector<NamedOutput> csv_dir_outputs(const std::string& dir, const std::string& option) {
  std::vector<NamedOutput> out;
  if (dir.empty()) return out;
  for (const char* name : kCsvFiles) out.push_back({fmt::format("{} ({})", option, name), dir + "/" + name});
  return out;
}

void write_csv_dir(const std::string& dir, const std::vector<BackendRun>& runs, const std::vector<DevicePeaks>& peaks) {
  make_output_dir(dir, "the CSV directory");
  const std::string contents[] = {steps_csv(runs), kernels_csv(runs), peaks_csv(peaks)};
  std::vector<FileContents> files;
  for (size_t i = 0; i < 3; ++i)
    files.push_back({dir + "/" + kCsvFiles[i], contents[i], fmt::format("the CSV file {}", kCsvFiles[i])});
  write_files_atomically(files);
}

}  // namespace core
