// The Roofline tab (panel_roofline.hpp), drawn with ImDrawList on core::roofline_axes' log-log map.
#include "ui/panel_roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/roofline.hpp"
#include "ui/panel_peaks.hpp"
#include "ui/plot_math.hpp"
#include "ui/panel_roofline_key.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

struct BackendDots {
  const core::BackendRun* run = nullptr;
  core::RoofCeilings roof;
  std::vector<core::RooflinePoint> points;
};

// The data area of the chart and its map from (intensity, GFLOP/s) to the screen.
struct Chart {
  core::RooflineAxes axes;
  ImVec2 min, max;  // the data area
  ImVec2 at(double intensity, double gflops) const {
    return ImVec2(min.x + static_cast<float>(axes.u(intensity)) * (max.x - min.x),
                  max.y - static_cast<float>(axes.v(gflops)) * (max.y - min.y));
  }
};

std::string dot_tooltip(const core::BackendRun& run, const core::RoofCeilings& roof, const core::RooflinePoint& p) {
  std::string text = fmt::format(
      "{} {}\nintensity {} FLOP/byte ({} FLOP / {} bytes per call)\nachieved {} GFLOP/s, {} GB/s ({} ms per call)",
      backend_title(run.name), p.kernel, format_value(p.intensity), format_value(p.flops), format_value(p.bytes),
      format_value(p.gflops), format_value(p.gbps), format_value(p.mean_ms));
  if (roof.bandwidth_gbps <= 0 && roof.compute_gflops <= 0) return text + "\nno measured peaks: no roof to compare";
  const bool memory = p.bound == core::Bound::Memory;
  text += fmt::format("\nbound by {}: {} ({} {})\nroof at this intensity: {} GFLOP/s\n{:.0f}% of that roof",
                      memory ? "memory bandwidth" : "compute", memory ? roof.bandwidth_from : roof.compute_from,
                      core::figure_text(memory ? roof.bandwidth_gbps : roof.compute_gflops),
                      memory ? "GB/s" : "GFLOP/s", format_value(p.roof_gflops), p.pct_of_roof);
  if (p.pct_of_roof > 100)
    text += " (above 100%: its data sat in the caches, which are faster than the memory the ceiling measures)";
  return text;
}

// A power of ten as an axis label: "0.001", "0.1", "1", "100", "10k", "1e-4", "1e6".
std::string decade_text(double v) {
  const int e = static_cast<int>(std::lround(std::log10(v)));
  if (e >= 0 && e <= 3) return fmt::format("{:.0f}", std::pow(10.0, e));
  if (e >= 4 && e <= 5) return fmt::format("{:.0f}k", std::pow(10.0, e - 3));
  if (e < 0 && e >= -3) return fmt::format("{:.{}f}", std::pow(10.0, e), -e);
  return fmt::format("1e{}", e);
}

void draw_grid(ImDrawList* dl, const Chart& c) {
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_TableBorderLight);
  const ImU32 label = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float font = ImGui::GetFontSize();
  for (double x = c.axes.x_lo; x <= c.axes.x_hi * 1.0001; x *= 10) {
    const float sx = c.at(x, c.axes.y_lo).x;
    dl->AddLine(ImVec2(sx, c.min.y), ImVec2(sx, c.max.y), grid);
    const std::string t = decade_text(x);
    const float w = ImGui::CalcTextSize(t.c_str()).x;
    dl->AddText(ImVec2(std::clamp(sx - w / 2, c.min.x - w / 2, c.max.x - w), c.max.y + 0.15f * font), label,
                t.c_str());
  }
  // A label every decade where they fit, else every second or third: labels never overlap.
  const float decade_px = c.at(c.axes.x_lo, c.axes.y_lo).y - c.at(c.axes.x_lo, c.axes.y_lo * 10).y;
  const int every = decade_px >= 1.05f * font ? 1 : 2 * decade_px >= 1.05f * font ? 2 : 3;
  int decade = 0;
  for (double y = c.axes.y_lo; y <= c.axes.y_hi * 1.0001; y *= 10, ++decade) {
    const float sy = c.at(c.axes.x_lo, y).y;
    dl->AddLine(ImVec2(c.min.x, sy), ImVec2(c.max.x, sy), grid);
    if (decade % every != 0) continue;
    const std::string t = decade_text(y);
    const float w = ImGui::CalcTextSize(t.c_str()).x;
    dl->AddText(ImVec2(c.min.x - w - 0.3f * font, sy - font / 2), label, t.c_str());
  }
  dl->AddRect(c.min, c.max, ImGui::GetColorU32(ImGuiCol_Border));
}

// The two ceilings of one backend (memory: the slope bandwidth x intensity; compute: the flat line); their figures
// are in the legend under the chart, where they cover nothing. `thick`: the line width (each backend drawn over the
// previous one a little thinner, so that two equal ceilings both show, as a line of two colours).
void draw_roof(ImDrawList* dl, const Chart& c, const BackendDots& b, float thick) {
  const ImU32 color = backend_color(b.run->name);
  const double ridge = core::ridge_intensity(b.roof);
  const double x_lo = c.axes.x_lo, x_hi = c.axes.x_hi;
  if (b.roof.bandwidth_gbps > 0) {
    const double end = ridge > 0 ? ridge : x_hi;
    dl->AddLine(c.at(x_lo, b.roof.bandwidth_gbps * x_lo), c.at(end, b.roof.bandwidth_gbps * end), color, thick);
  }
  if (b.roof.compute_gflops > 0) {
    const double begin = ridge > 0 ? ridge : x_lo;
    const ImVec2 a = c.at(begin, b.roof.compute_gflops), z = c.at(x_hi, b.roof.compute_gflops);
    dl->AddLine(a, z, color, thick);
  }
}

// The axes' titles, drawn inside the chart in its corners: "y: ..." top left (above the memory slope: the unattainable
// region, where no kernel's dot can be), "x: ..." bottom right; their rectangles.
constexpr const char* kAxisTitles[] = {"y: GFLOP/s (log)", "x: FLOP per byte (log)"};

std::vector<ImVec4> axis_titles(const Chart& c, float size) {
  const float pad = 0.2f * ImGui::GetFontSize();
  const ImVec2 y = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, kAxisTitles[0]);
  const ImVec2 x = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0.0f, kAxisTitles[1]);
  return {ImVec4(c.min.x + pad, c.min.y + pad, c.min.x + pad + y.x, c.min.y + pad + y.y),
          ImVec4(c.max.x - pad - x.x, c.max.y - pad - x.y, c.max.x - pad, c.max.y - pad)};
}

using roofline_key::draw_key;
using roofline_key::grouped_key;
using roofline_key::key_rows;
using roofline_key::KeyEntry;

// Every backend's dots and ceilings, with what the note under the chart says of the points that are not dots.
struct RoofData {
  std::vector<BackendDots> backends;
  std::vector<core::RooflinePoint> all;
  std::vector<core::RoofCeilings> roofs;
  std::vector<std::string> off_chart;  // kernels without FLOPs: no place on a log axis
  std::string transfers;  // --input host: the batch's upload, host to device (not a kernel: no roof applies)
};

RoofData roof_data(const DashboardView& view) {
  RoofData d;
  for (const auto& run : view.runs) {
    BackendDots b{&run, view.roof(run), core::roofline_points(view.roof(run), run.kernels.rows())};
    for (const auto& p : b.points) {
      if (p.transfer)
        d.transfers += fmt::format("{}{} {} GB/s", d.transfers.empty() ? "" : ", ", backend_title(run.name),
                                   format_value(p.gbps));
      else if (p.flops <= 0 && std::find(d.off_chart.begin(), d.off_chart.end(), p.kernel) == d.off_chart.end())
        d.off_chart.push_back(p.kernel);
    }
    d.all.insert(d.all.end(), b.points.begin(), b.points.end());
    d.roofs.push_back(b.roof);
    d.backends.push_back(std::move(b));
  }
  return d;
}

// Each kernel's number is its place here: the matrix multiplications and convolutions first (what a roofline lesson
// is about), then the order of the step.
std::vector<std::string> numbered_kernels(const std::vector<BackendDots>& backends) {
  std::vector<std::string> kernels;
  for (const auto& b : backends)
    for (const auto& p : b.points)
      if (p.flops > 0 && p.gflops > 0 && std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end())
        kernels.push_back(p.kernel);
  auto heavy = [](const std::string& k) { return k.rfind("matmul", 0) == 0 || k.rfind("conv2d", 0) == 0; };
  std::stable_sort(kernels.begin(), kernels.end(),
                   [&](const std::string& x, const std::string& y) { return heavy(x) > heavy(y); });
  return kernels;
}

int number_of(const std::vector<std::string>& kernels, const std::string& k) {
  return static_cast<int>(std::find(kernels.begin(), kernels.end(), k) - kernels.begin()) + 1;
}

// Under the chart, in slightly smaller type flowing onto rows: the legend (each backend's mark and its two ceilings,
// in its colour), then the key of the numbers not named beside their dots; then the note (where with_note).
std::vector<KeyEntry> key_entries(const std::vector<BackendDots>& backends, const std::vector<std::string>& key,
                                  const std::string& note, bool with_note) {
  std::vector<KeyEntry> entries;
  for (const auto& b : backends)
    entries.emplace_back(fmt::format("{} ({}): {} GB/s, {} GFLOP/s", backend_title(b.run->name),
                                     b.run->name == "cpu" ? "squares" : "circles",
                                     core::figure_text(b.roof.bandwidth_gbps),
                                     core::figure_text(b.roof.compute_gflops)),
                         backend_color(b.run->name));
  for (const auto& k : grouped_key(key)) entries.emplace_back(k, ImGui::GetColorU32(ImGuiCol_Text));
  if (with_note) entries.emplace_back(note, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  return entries;
}

// One frame's sizes and dots, which the chart is laid out from.
struct RoofFrame {
  const std::vector<BackendDots>* backends = nullptr;
  const std::vector<std::string>* kernels = nullptr;  // numbered_kernels
  core::RooflineAxes axes;
  ImVec2 avail, origin;
  float font = 0, line = 0;
  float y_labels = 0;   // the widest y-axis label, px
  float r = 0;          // a dot's half size, px
  float name_size = 0;  // the names in the chart, px
};

// The chart laid out: its rectangle, the names that fit in it beside a dot ("3 matmul_forward") and those left for
// the key.
struct ChartLayout {
  Chart c;
  ImVec2 size;
  std::vector<std::pair<ImVec2, std::string>> names;
  std::vector<std::string> key;
};

// The chart's rectangle with `key_height` pixels kept under it for the key, and the names that fit in it: each
// kernel's beside the first of its dots where one of four places is inside the chart and free.
ChartLayout lay_out(const RoofFrame& f, float key_height) {
  ChartLayout l;
  Chart& c = l.c;
  const float font = f.font, r = f.r;
  // The legend, the key and the note, and the spacing after the chart and after them.
  const float below = key_height + 2 * ImGui::GetStyle().ItemSpacing.y;
  l.size = ImVec2(f.avail.x, std::max(f.avail.y - below, 4.5f * f.line));
  c.axes = f.axes;
  c.min = ImVec2(f.origin.x + f.y_labels + 0.6f * font, f.origin.y + 0.3f * font);
  c.max = ImVec2(f.origin.x + l.size.x - 0.6f * font, f.origin.y + l.size.y - 1.2f * f.line);
  std::vector<ImVec4> taken = axis_titles(c, f.name_size);  // rectangles of the axes' titles, names and dots
  std::vector<std::pair<ImVec2, const core::RooflinePoint*>> dots;
  for (const auto& b : *f.backends)
    for (const auto& p : b.points)
      if (p.flops > 0 && p.gflops > 0) {
        dots.emplace_back(c.at(p.intensity, p.gflops), &p);
        taken.emplace_back(dots.back().first.x - r, dots.back().first.y - r, dots.back().first.x + r,
                           dots.back().first.y + r);
      }
  for (const std::string& k : *f.kernels) {
    const std::string text = fmt::format("{} {}", number_of(*f.kernels, k), k);
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(f.name_size, FLT_MAX, 0.0f, text.c_str());
    bool placed = false;
    for (const auto& [at, p] : dots) {
      if (p->kernel != k || placed) continue;
      const float gap = 1.3f * r;
      const ImVec4 places[] = {{at.x + gap, at.y - ts.y / 2, at.x + gap + ts.x, at.y + ts.y / 2},
                               {at.x - gap - ts.x, at.y - ts.y / 2, at.x - gap, at.y + ts.y / 2},
                               {at.x - ts.x / 2, at.y - gap - ts.y, at.x + ts.x / 2, at.y - gap},
                               {at.x - ts.x / 2, at.y + gap, at.x + ts.x / 2, at.y + gap + ts.y}};
      for (const ImVec4& box : places) {
        const bool inside = box.x >= c.min.x && box.z <= c.max.x && box.y >= c.min.y && box.w <= c.max.y;
        const bool free = std::none_of(taken.begin(), taken.end(), [&](const ImVec4& o) {
          return box.x < o.z && o.x < box.z && box.y < o.w && o.y < box.w;
        });
        if (!inside || !free) continue;
        taken.push_back(box);
        l.names.emplace_back(ImVec2(box.x, box.y), text);
        placed = true;
        break;
      }
    }
    if (!placed) l.key.push_back(text);
  }
  return l;
}

// The axes' titles inside the chart, in its corners: "GFLOP/s" top left (above the memory slope, where no kernel
// can be: the unattainable region), "FLOP per byte" bottom right.
void draw_axis_titles(ImDrawList* dl, const Chart& c, float name_size) {
  const std::vector<ImVec4> titles = axis_titles(c, name_size);
  for (size_t i = 0; i < titles.size(); ++i)
    dl->AddText(ImGui::GetFont(), name_size, ImVec2(titles[i].x, titles[i].y),
                ImGui::GetColorU32(ImGuiCol_TextDisabled), kAxisTitles[i]);
}

// The dot nearest the mouse (within a font size) and its backend; none when the mouse is on none.
struct HoveredDot {
  const core::RooflinePoint* dot = nullptr;
  const BackendDots* backend = nullptr;
};

// The dots: GPU circles, CPU squares (shape and colour both tell the backends apart), the kernel's number inside;
// each drawn one goes to drawn.dots.
HoveredDot draw_dots(ImDrawList* dl, const Chart& c, const RoofFrame& f, bool hovered, RooflinePanel::Drawn& drawn) {
  const float font = f.font, r = f.r;
  const ImU32 outline = ImGui::GetColorU32(ImGuiCol_Text);
  HoveredDot h;
  float best = font * font;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float number_size = 0.62f * font;
  for (const auto& b : *f.backends) {
    const ImU32 color = backend_color(b.run->name);
    for (const auto& p : b.points) {
      if (p.flops <= 0 || p.gflops <= 0) continue;
      const ImVec2 at = c.at(p.intensity, p.gflops);
      if (b.run->name == "cpu") {
        dl->AddRectFilled(ImVec2(at.x - r, at.y - r), ImVec2(at.x + r, at.y + r), color);
        dl->AddRect(ImVec2(at.x - r, at.y - r), ImVec2(at.x + r, at.y + r), outline);
      } else {
        dl->AddCircleFilled(at, r * 1.1f, color);
        dl->AddCircle(at, r * 1.1f, outline);
      }
      const int n = number_of(*f.kernels, p.kernel);
      const std::string number = std::to_string(n);
      const ImVec2 ns = ImGui::GetFont()->CalcTextSizeA(number_size, FLT_MAX, 0.0f, number.c_str());
      dl->AddText(ImGui::GetFont(), number_size, ImVec2(at.x - ns.x / 2, at.y - ns.y / 2), IM_COL32(0, 0, 0, 255),
                  number.c_str());
      drawn.dots.emplace_back(p.kernel, n);
      const float dx = mouse.x - at.x, dy = mouse.y - at.y;
      if (hovered && dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        h.dot = &p;
        h.backend = &b;
      }
    }
  }
  return h;
}

}  // namespace

void RooflinePanel::draw(const DashboardView& view, Controller* controller) {
  draw_peaks_row(view, controller, "Ceilings:", "both",
                 "The roofline (Williams, Waterman & Patterson 2009): a kernel of arithmetic intensity I (FLOP per "
                 "byte it must move) runs at most at min(compute ceiling, bandwidth x I). Left of the ridge the "
                 "memory ceiling binds, right of it the compute ceiling. Each dot is a kernel's measured GFLOP/s at "
                 "its intensity; the gap up to its roof is what it leaves unused.");
  const RoofData d = roof_data(view);
  const std::vector<std::string> kernels = numbered_kernels(d.backends);
  RoofFrame f;
  f.backends = &d.backends;
  f.kernels = &kernels;
  f.font = ImGui::GetFontSize();
  f.line = ImGui::GetTextLineHeightWithSpacing();
  f.avail = ImGui::GetContentRegionAvail();
  f.origin = ImGui::GetCursorScreenPos();
  f.axes = core::roofline_axes(d.all, d.roofs);
  for (double y = f.axes.y_lo; y <= f.axes.y_hi * 1.0001; y *= 10)
    f.y_labels = std::max(f.y_labels, ImGui::CalcTextSize(decade_text(y).c_str()).x);
  f.r = 0.42f * f.font;                  // a dot's half size: room for its number inside
  f.name_size = 0.85f * f.font;          // the names in the chart
  const float key_size = 0.75f * f.font;  // the legend, the key and the note under it
  std::string note = "hover a dot for its figures";
  if (!d.transfers.empty()) note += " · upload_batch, host to device (a transfer, not a kernel): " + d.transfers;
  if (!d.off_chart.empty()) {
    note += " · 0 FLOP, not drawn:";
    for (const auto& k : d.off_chart) note += " " + k;
  }
  bool with_note = true;  // the note is a hint: it gives way where the chart would get less than 6 lines
  auto flow = [&](const std::vector<std::string>& key) { return key_entries(d.backends, key, note, with_note); };
  ChartLayout l = lay_out(f, 0.0f);
  const float key_row = std::round(1.15f * key_size);
  // Again with the rows the legend and the key need kept under the chart, until they suffice (a smaller chart fits
  // fewer names).
  for (int rows = -1, pass = 0; pass < 4 && key_rows(flow(l.key), key_size, f.avail.x) != rows; ++pass) {
    rows = key_rows(flow(l.key), key_size, f.avail.x);
    l = lay_out(f, static_cast<float>(rows) * key_row);
    if (with_note && l.size.y < 6 * f.line) with_note = false, rows = -1;
  }
  const Chart& c = l.c;
  ImGui::InvisibleButton("roofline_canvas", l.size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_grid(dl, c);
  draw_axis_titles(dl, c, f.name_size);

  dl->PushClipRect(c.min, c.max, true);
  float thick = std::max(4.0f, 0.25f * f.font);
  for (const auto& b : d.backends) {
    draw_roof(dl, c, b, thick);
    thick = std::max(1.5f, thick * 0.45f);
  }
  drawn_ = Drawn{};
  const HoveredDot h = draw_dots(dl, c, f, hovered, drawn_);
  for (const auto& [at, text] : l.names) {
    dl->AddText(ImGui::GetFont(), f.name_size, at, ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
    drawn_.in_chart.push_back(text);
  }
  drawn_.key = l.key;
  dl->PopClipRect();
  if (d.all.empty())
    dl->AddText(ImVec2(c.min.x + f.font, c.min.y + 2.5f * f.line), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                "no kernel timings yet: the dots appear after the first steps");
  if (h.dot) wrapped_tooltip(dot_tooltip(*h.backend->run, h.backend->roof, *h.dot));

  ImGui::SetCursorScreenPos(ImVec2(f.origin.x, f.origin.y + l.size.y));
  draw_key(flow(l.key), key_size, key_row);
}

}  // namespace ui
