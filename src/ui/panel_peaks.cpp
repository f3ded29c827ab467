// The peaks line of the Bandwidth and Roofline tabs (panel_peaks.hpp).
#include "ui/panel_peaks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ui/text_fit.hpp"

namespace ui {
namespace {

using core::figure_text;

const core::PeakFigure* figure_labelled(const core::DevicePeaks& peaks, const std::string& label) {
  for (const auto& f : peaks.figures)
    if (f.label == label) return &f;
  return nullptr;
}

}  // namespace

std::string ceiling_text(const DashboardView& view, const core::BackendRun& run, const std::string& kind) {
  const core::RoofCeilings roof = view.roof(run);
  std::string text = backend_title(run.name);
  if (roof.bandwidth_gbps <= 0 && roof.compute_gflops <= 0) return text + " not measured";
  if (kind != "compute") text += fmt::format(" {} GB/s", figure_text(roof.bandwidth_gbps));
  // A software device's ceiling is its copy shader; its vkCmdCopyBuffer (a memcpy) beside it, for comparison.
  const core::BackendPeaks* p = view.peaks_of(run.name);
  if (kind != "compute" && p && p->peaks && p->peaks->software)
    if (const double transfer = p->peaks->value("copy_transfer"); transfer > 0)
      text += fmt::format(" (vkCmdCopyBuffer {})", figure_text(transfer));
  if (kind == "both") text += ",";
  if (kind != "bandwidth") text += fmt::format(" {} GFLOP/s", figure_text(roof.compute_gflops));
  return text;
}

std::string peaks_tooltip(const DashboardView& view, const core::BackendRun& run) {
  const core::BackendPeaks* p = view.peaks_of(run.name);
  if (!p || !p->peaks)
    return fmt::format("{}: no measured peaks{}. Re-measure peaks pauses training and measures them (about 15 s on "
                       "a quiet 2-core machine); `trainscope peaks` does the same from a terminal.",
                       backend_title(run.name), p && !p->note.empty() ? " (" + p->note + ")" : "");
  const core::DevicePeaks& peaks = *p->peaks;
  const core::RoofCeilings roof = core::roof_ceilings(peaks, run.config.threads);
  std::string text = fmt::format("{}: {}\n", backend_title(run.name), peaks.device);
  if (peaks.software) {
    text += "A software Vulkan device: these are the CPU's figures seen through the driver.";
    if (const core::PeakFigure* t = peaks.find("copy_transfer"); t && t->value > 0)
      text += fmt::format(" Its memory ceiling is what its kernels can reach, the copy shader; its vkCmdCopyBuffer "
                          "({} GB/s) is the CPU's memcpy, which no shader matches.",
                          figure_text(t->value));
    text += "\n";
  }
  auto ceiling = [&](const char* what, double value, const char* unit, const std::string& from) {
    if (value <= 0) return fmt::format("\n{} ceiling: not measured\n", what);
    const core::PeakFigure* f = figure_labelled(peaks, from);
    return fmt::format("\n{} ceiling: {} {} ({}): {}\n", what, figure_text(value), unit, from,
                       f ? f->method : std::string("the best of the samples"));
  };
  text += ceiling("Memory", roof.bandwidth_gbps, "GB/s (1e9 bytes/s)", roof.bandwidth_from);
  text += ceiling("Compute", roof.compute_gflops, "GFLOP/s (an FMA counts 2 FLOP)", roof.compute_from);
  text += fmt::format("\n{} {} in {:.1f} s at load average {}.", p->source == "cached" ? "From the cache; measured"
                                                                                       : "Measured",
                      peaks.measured_at, peaks.seconds,
                      peaks.load_average >= 0 ? fmt::format("{:.2f}", peaks.load_average) : "unknown");
  if (!p->note.empty()) text += "\n" + p->note;
  return text;
}

void draw_peaks_row(const DashboardView& view, Controller* controller, const std::string& title,
                    const std::string& kind, const std::string& help) {
  if (controller) {
    ImGui::BeginDisabled(view.peaks_measuring || !view.live);
    const bool clicked = ImGui::SmallButton("Re-measure");
    ImGui::EndDisabled();
    if (clicked) controller->remeasure_peaks();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      wrapped_tooltip(view.peaks_measuring ? "Measuring the peaks, training paused: " + view.peaks_stage
                                           : "Re-measure peaks: pauses training, measures every device's peaks "
                                             "again (about 15 s on a quiet 2-core machine), caches them and resumes.");
    ImGui::SameLine();
  }
  std::vector<std::string> pieces = {title};
  for (const auto& run : view.runs) pieces.push_back(ceiling_text(view, run, kind));
  const float marker = ImGui::CalcTextSize(" (?)").x;
  ImGui::TextDisabled("%s (?)", fit_pieces(pieces, ImGui::GetContentRegionAvail().x - marker, "  ").c_str());
  if (!ImGui::IsItemHovered()) return;
  std::string tip = help.empty() ? "" : help + "\n\n";
  tip += "The ceilings are measured by trainscope on this machine (never a datasheet figure), once per device, with no "
         "training running, and kept in the peaks cache ($XDG_CACHE_HOME/trainscope/peaks.json); Re-measure pauses "
         "training, measures again and resumes.";
  if (view.peaks_measuring) tip += "\nMeasuring now: " + view.peaks_stage;
  else if (!view.peaks_message.empty()) tip += "\nLast measurement: " + view.peaks_message;
  for (const auto& run : view.runs) tip += "\n\n" + peaks_tooltip(view, run);
  wrapped_tooltip(tip);
}

}  // namespace ui
