// The Sweep tab (see panel_sweep.hpp): run::LiveSweep measures the points; here the buttons, the status, a log-log
// plot drawn with ImDrawList (the plot widget has no log x-axis) and the speedup and crossover in words.
#include "ui/panel_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/metrics.hpp"  // core::monotonic_seconds
#include "run/data.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/screenshot.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

// "1k", "10k", "1M" for the decades of the y axis.
std::string decade_label(double d) {
  if (d >= 6) return fmt::format("{:g}M", std::pow(10.0, d - 6));
  if (d >= 3) return fmt::format("{:g}k", std::pow(10.0, d - 3));
  return fmt::format("{:g}", std::pow(10.0, d));
}

// The GPU/CPU speedup in words: at the smallest and the largest batch both measured, and the best.
std::string speedup_text(const run::SweepResult& r) {
  std::vector<int> both;
  for (const auto& p : r.points)
    if (p.backend == "gpu" && r.speedup(p.batch) > 0) both.push_back(p.batch);
  if (both.empty()) return {};
  int best = both.front();
  for (int b : both)
    if (r.speedup(b) > r.speedup(best)) best = b;
  std::string s = fmt::format("GPU/CPU: {:.2g}x at batch {}", r.speedup(both.front()), both.front());
  if (both.size() > 1) s += fmt::format(", {:.2g}x at {}", r.speedup(both.back()), both.back());
  if (best != both.front() && best != both.back()) s += fmt::format(" (best {:.2g}x at {})", r.speedup(best), best);
  return s + ".";
}

}  // namespace




void SweepPanel::draw(const DashboardView& view, Controller* controller) {
  const run::LiveSweepState& s = view.sweep;

  ImGui::BeginDisabled(controller == nullptr || !view.live);
  if (!s.running) {
    if (ImGui::Button("Run sweep") && controller) controller->start_sweep();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Pauses training, then each backend trains the model shown from the same weights at batch\n"
                        "sizes 1, 2, 4, ... 4096 (up to the training set): 2 warm-up and 5 timed steps each;\n"
                        "the CPU with all its threads and with one.\n"
                        "Training resumes at the end (unless it was paused before).");
  } else if (ImGui::Button("Stop sweep") && controller) {
    controller->stop_sweep();
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(s.running || s.result.points.empty());
  if (ImGui::Button("Save") && controller) controller->save_sweep();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Writes the points as trainscope sweep --report (JSON) and --csv do, beside the screenshots");
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (!view.sweep_saved.empty())
    text_line(view.sweep_saved, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  else if (s.status.empty())
    text_line("samples/s per batch size, GPU against CPU", ImGui::GetColorU32(ImGuiCol_TextDisabled));
  else if (s.total > 0 && s.running)
    text_line(fmt::format("{}: {} of {} points, {}", s.status, s.result.points.size(), s.total,
                          format_duration(core::monotonic_seconds() - s.started_s)));
  else if (s.total > 0)
    text_line(fmt::format("{}: {} of {} points in {}", s.status, s.result.points.size(), s.total,
                          format_duration(s.seconds)));
  else
    text_line(s.status);

  // The words below the plot (whole words: "0.085x" never breaks at its point), as many lines as leave the chart's
  // data area a third of the tab's height at least (the full explanation of the crossover in their tooltip).
  const run::SweepResult& r = s.result;
  std::string words;
  if (!r.points.empty()) {
    // The verdict first: where the lines leave no room for all, the ratios give way (they are in the tooltip).
    words = "Crossover: ";
    if (r.crossover)
      words += fmt::format("batch {}: from there on the GPU trains more samples/s.", *r.crossover);
    else if (r.software_gpu && r.crossover_text.rfind("none on this machine", 0) == 0)
      words += "none here (a software \"GPU\" on the same cores).";
    else
      words += r.crossover_text;
    words += ' ';  // (not " " + speedup_text(r): GCC 12 warns -Wrestrict, wrongly, on that operator+ at -O3)
    words += speedup_text(r);
  }
  const float font = ImGui::GetFontSize();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float avail = ImGui::GetContentRegionAvail().y;
  drawn_ = Drawn{};
  drawn_.panel_height = ImGui::GetWindowHeight();
  // The plot's rows around its data area: the legend on top, the x labels and the x title below (draw_plot).
  const float plot_rows = 1.3f * font + 2.5f * font + ImGui::GetStyle().ItemSpacing.y;
  const float data_min = drawn_.panel_height / 3;
  int lines = words.empty() ? 0 : text_lines_needed(words, 4);
  while (lines > 1 && avail - static_cast<float>(lines) * line - plot_rows < data_min) --lines;
  const float plot_height = std::max(6 * font, avail - static_cast<float>(lines) * line);
  draw_plot(r, plot_height);
  if (lines > 0) {
    const std::vector<std::string> shown = wrap_words(words, font, ImGui::GetContentRegionAvail().x, lines);
    drawn_.word_lines = shown;
    ImGui::BeginGroup();
    for (const std::string& l : shown) ImGui::TextUnformatted(l.c_str());
    ImGui::EndGroup();
    if (ImGui::IsItemHovered()) wrapped_tooltip(words + "\n\nCrossover: " + r.crossover_text);
  }
}

int batch_label_stride(float span, float widest, float gap) {
  for (int stride : {2, 3, 4, 6})
    if (static_cast<float>(stride) / 12.0f * span >= widest + gap) return stride;
  return 12;
}

namespace {

// One line of the plot: its key in the result, its legend name and its colour.
struct SweepSeries {
  std::string key, name;
  ImU32 color;
};

// The series of r with their legend names and colours; legend_width: the legend's width in pixels. The first CPU
// series is the reference (all threads); another thread count is drawn lighter.
std::vector<SweepSeries> plot_series(const run::SweepResult& r, float font, float& legend_width) {
  std::vector<SweepSeries> series;
  std::string cpu_reference;
  for (const std::string& key : r.series()) {
    const bool gpu = key.rfind("gpu", 0) == 0;
    if (!gpu && cpu_reference.empty()) cpu_reference = key;
    const ImU32 alpha = gpu || key == cpu_reference ? 0xFF000000u : 0x90000000u;
    std::string name = (gpu ? "GPU" : "CPU") + key.substr(std::min<size_t>(3, key.size()));  // "CPU 2 threads"
    if (gpu && r.software_gpu) name += " (software)";
    legend_width += ImGui::CalcTextSize(name.c_str()).x + (series.empty() ? 0 : 0.8f * font);
    series.push_back({key, name, (backend_color(gpu ? "gpu" : "cpu") & 0x00FFFFFFu) | alpha});
  }
  return series;
}

// The crossover at batch `crossover` (x pixels in the data area lo..hi): a vertical line, its label, and the GPU's
// side of it lightly shaded.
void draw_crossover(ImDrawList* dl, int crossover, float x, ImVec2 lo, ImVec2 hi, float font) {
  const ImU32 mark = IM_COL32(200, 40, 40, 255);
  dl->AddRectFilled(ImVec2(x, lo.y), hi, IM_COL32(200, 40, 40, 24));
  dl->AddLine(ImVec2(x, lo.y), ImVec2(x, hi.y), mark, 2.0f);
  const std::string label = fmt::format("crossover: batch {}", crossover);
  const float w = ImGui::CalcTextSize(label.c_str()).x;
  dl->AddText(ImVec2(std::min(x + 0.3f * font, hi.x - w - 0.2f * font), hi.y - 1.2f * font), mark, label.c_str());
}

}  // namespace

void SweepPanel::draw_plot(const run::SweepResult& r, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImGui::Dummy(ImVec2(width, height));
  const float font = ImGui::GetFontSize();
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.35f);

  float legend_width = 0;
  const std::vector<SweepSeries> series = plot_series(r, font, legend_width);
  // Above the data area one row: the y axis's title on the left and the legend on the right when both fit, else
  // the legend alone (the y axis's title then joins the x axis's); on the left the y tick labels; below, the x tick
  // labels and the x title. The data area ends half the widest x label before the right edge, so that "4096"
  // stays whole under its tick.
  const char* y_title = "samples/s";
  const bool y_title_shown = ImGui::CalcTextSize(y_title).x + font + legend_width <= width;
  const float y_labels = ImGui::CalcTextSize("100k").x + 0.4f * font;
  const float widest_x = ImGui::CalcTextSize("4096").x;
  const ImVec2 lo(origin.x + y_labels, origin.y + 1.3f * font);
  const ImVec2 hi(origin.x + width - std::max(0.2f * font, widest_x / 2), origin.y + height - 2.5f * font);
  if (hi.x - lo.x < 4 * font || hi.y - lo.y < 2 * font) return;
  drawn_.data_min = lo;
  drawn_.data_max = hi;
  dl->AddRect(lo, hi, grid);
  // x: log2 of the batch size over 1..4096; y: log10 of samples/s over the decades the points span.
  double y_min = 1e300, y_max = 0;
  for (const auto& p : r.points)
    if (p.measured()) y_min = std::min(y_min, p.samples_per_s), y_max = std::max(y_max, p.samples_per_s);
  if (y_max <= 0) y_min = 100, y_max = 1e6;
  const double d0 = std::floor(std::log10(y_min)), d1 = std::max(d0 + 1, std::ceil(std::log10(y_max)));
  auto px = [&](double batch) { return lo.x + static_cast<float>(std::log2(batch) / 12.0) * (hi.x - lo.x); };
  auto py = [&](double v) { return hi.y - static_cast<float>((std::log10(v) - d0) / (d1 - d0)) * (hi.y - lo.y); };
  const int stride = batch_label_stride(hi.x - lo.x, widest_x, 0.6f * font);
  for (int e = 0; e <= 12; e += stride) {
    const float x = px(std::exp2(e));
    dl->AddLine(ImVec2(x, lo.y), ImVec2(x, hi.y), grid);
    const std::string label = fmt::format("{}", 1 << e);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    const float at = std::max(origin.x, x - w / 2);
    dl->AddText(ImVec2(at, hi.y + 0.15f * font), axis, label.c_str());
    drawn_.x_labels.emplace_back(at, hi.y + 0.15f * font, at + w, hi.y + 1.15f * font);
  }
  for (double d = d0; d <= d1; ++d) {
    const float y = py(std::pow(10.0, d));
    dl->AddLine(ImVec2(lo.x, y), ImVec2(hi.x, y), grid);
    const std::string label = decade_label(d);
    dl->AddText(ImVec2(lo.x - ImGui::CalcTextSize(label.c_str()).x - 0.3f * font, y - font / 2), axis, label.c_str());
  }
  if (y_title_shown) dl->AddText(origin, axis, y_title);
  const char* x_title = y_title_shown ? "batch size (samples per step)" : "x: batch size, y: samples/s";
  dl->AddText(ImVec2(lo.x + std::max(0.0f, (hi.x - lo.x - ImGui::CalcTextSize(x_title).x) / 2), hi.y + 1.2f * font),
              axis, x_title);
  if (r.crossover) draw_crossover(dl, *r.crossover, px(*r.crossover), lo, hi, font);
  // One line per series, and its legend entry, right-aligned.
  float legend_x = origin.x + width;
  const float legend_y = origin.y;
  for (const SweepSeries& s : series) {
    ImVec2 prev(-1, -1);
    for (const auto& p : r.points) {
      if (p.series != s.key || !p.measured()) continue;
      const ImVec2 at(px(p.batch), py(p.samples_per_s));
      if (prev.x >= 0) dl->AddLine(prev, at, s.color, 2.0f);
      dl->AddCircleFilled(at, 0.22f * font, s.color);
      prev = at;
    }
    legend_x -= ImGui::CalcTextSize(s.name.c_str()).x;
    dl->AddText(ImVec2(std::max(origin.x, legend_x), legend_y), s.color, s.name.c_str());
    legend_x -= 0.8f * font;
  }
}

}  // namespace ui
