// The Roofline tab (panel_roofline.hpp), drawn with ImDrawList on core::roofline_axes' log-log map.
#include "ui/panel_roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/roofline.hpp"
#include "ui/panel_peaks.hpp"
#include "ui/plot_math.hpp"
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
  for (double y = c.axes.y_lo; y <= c.axes.y_hi * 1.0001; y *= 10) {
    const float sy = c.at(c.axes.x_lo, y).y;
    dl->AddLine(ImVec2(c.min.x, sy), ImVec2(c.max.x, sy), grid);
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

}  // namespace

void RooflinePanel::draw(const DashboardView& view, Controller* controller) {
  draw_peaks_row(view, controller, "Ceilings:", "both",
                 "The roofline (Williams, Waterman & Patterson 2009): a kernel of arithmetic intensity I (FLOP per "
                 "byte it must move) runs at most at min(compute ceiling, bandwidth x I). Left of the ridge the "
                 "memory ceiling binds, right of it the compute ceiling. Each dot is a kernel's measured GFLOP/s at "
                 "its intensity; the gap up to its roof is what it leaves unused.");
  std::vector<BackendDots> backends;
  std::vector<core::RooflinePoint> all;
  std::vector<core::RoofCeilings> roofs;
  std::vector<std::string> off_chart;  // kernels without FLOPs: no place on a log axis
  std::string transfers;  // --input host: the batch's upload, host to device (not a kernel: no roof applies)
  for (const auto& run : view.runs) {
    BackendDots b{&run, view.roof(run), core::roofline_points(view.roof(run), run.kernels.rows())};
    for (const auto& p : b.points) {
      if (p.transfer)
        transfers += fmt::format("{}{} {} GB/s", transfers.empty() ? "" : ", ", backend_title(run.name),
                                 format_value(p.gbps));
      else if (p.flops <= 0 && std::find(off_chart.begin(), off_chart.end(), p.kernel) == off_chart.end())
        off_chart.push_back(p.kernel);
    }
    all.insert(all.end(), b.points.begin(), b.points.end());
    roofs.push_back(b.roof);
    backends.push_back(std::move(b));
  }
  const float font = ImGui::GetFontSize();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float below = 2 * line;  // the legend and the note
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(avail.x, std::max(avail.y - below, 6 * line));
  ImGui::InvisibleButton("roofline_canvas", size);
  const bool hovered = ImGui::IsItemHovered();

  Chart c;
  c.axes = core::roofline_axes(all, roofs);
  float y_labels = 0;
  for (double y = c.axes.y_lo; y <= c.axes.y_hi * 1.0001; y *= 10)
    y_labels = std::max(y_labels, ImGui::CalcTextSize(decade_text(y).c_str()).x);
  c.min = ImVec2(origin.x + y_labels + 0.6f * font,
                 origin.y + 0.3f * font);
  c.max = ImVec2(origin.x + size.x - 0.6f * font, origin.y + size.y - 2.2f * line);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_grid(dl, c);
  const char* x_title = "x: FLOP per byte, y: GFLOP/s (log-log)";
  const std::string x_shown = fit_text(x_title, c.max.x - c.min.x);
  dl->AddText(ImVec2(c.min.x + (c.max.x - c.min.x - ImGui::CalcTextSize(x_shown.c_str()).x) / 2, c.max.y + line),
              ImGui::GetColorU32(ImGuiCol_Text), x_shown.c_str());

  dl->PushClipRect(c.min, c.max, true);
  float thick = std::max(4.0f, 0.25f * font);
  for (const auto& b : backends) {
    draw_roof(dl, c, b, thick);
    thick = std::max(1.5f, thick * 0.45f);
  }
  // The dots: GPU circles, CPU squares (shape and colour both tell the backends apart); hover for the figures.
  const float r = 0.32f * font;
  const ImU32 outline = ImGui::GetColorU32(ImGuiCol_Text);
  const core::RooflinePoint* hovered_dot = nullptr;
  const BackendDots* hovered_backend = nullptr;
  float best = font * font;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  struct Dot {
    ImVec2 at;
    const core::RooflinePoint* point;
  };
  std::vector<Dot> dots;
  for (const auto& b : backends) {
    const ImU32 color = backend_color(b.run->name);
    for (const auto& p : b.points) {
      if (p.flops <= 0 || p.gflops <= 0) continue;
      const ImVec2 at = c.at(p.intensity, p.gflops);
      dots.push_back({at, &p});
      if (b.run->name == "cpu") {
        dl->AddRectFilled(ImVec2(at.x - r, at.y - r), ImVec2(at.x + r, at.y + r), color);
        dl->AddRect(ImVec2(at.x - r, at.y - r), ImVec2(at.x + r, at.y + r), outline);
      } else {
        dl->AddCircleFilled(at, r * 1.15f, color);
        dl->AddCircle(at, r * 1.15f, outline);
      }
      const float dx = mouse.x - at.x, dy = mouse.y - at.y;
      if (hovered && dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hovered_dot = &p;
        hovered_backend = &b;
      }
    }
  }
  // The kernels' names: the matrix multiplications first (what a roofline lesson is about), each name right of its
  // dot, else left, above or below, wherever it covers no other name or dot and stays inside the chart.
  std::stable_sort(dots.begin(), dots.end(), [](const Dot& a, const Dot& b) {
    return (a.point->kernel.rfind("matmul", 0) == 0) > (b.point->kernel.rfind("matmul", 0) == 0);
  });
  std::vector<ImVec4> taken;  // rectangles of names and dots
  for (const Dot& d : dots) taken.emplace_back(d.at.x - r, d.at.y - r, d.at.x + r, d.at.y + r);
  std::vector<std::string> named;  // one name per kernel (both backends' dots of a kernel share it)
  for (const Dot& d : dots) {
    const std::string& name = d.point->kernel;
    if (std::find(named.begin(), named.end(), name) != named.end()) continue;
    const ImVec2 ts = ImGui::CalcTextSize(name.c_str());
    const float gap = 1.6f * r;
    const ImVec4 places[] = {{d.at.x + gap, d.at.y - ts.y / 2, d.at.x + gap + ts.x, d.at.y + ts.y / 2},
                             {d.at.x - gap - ts.x, d.at.y - ts.y / 2, d.at.x - gap, d.at.y + ts.y / 2},
                             {d.at.x - ts.x / 2, d.at.y - gap - ts.y, d.at.x + ts.x / 2, d.at.y - gap},
                             {d.at.x - ts.x / 2, d.at.y + gap, d.at.x + ts.x / 2, d.at.y + gap + ts.y}};
    for (const ImVec4& box : places) {
      const bool inside = box.x >= c.min.x && box.z <= c.max.x && box.y >= c.min.y && box.w <= c.max.y;
      const bool free = std::none_of(taken.begin(), taken.end(), [&](const ImVec4& o) {
        return box.x < o.z && o.x < box.z && box.y < o.w && o.y < box.w;
      });
      if (!inside || !free) continue;
      taken.push_back(box);
      named.push_back(name);
      dl->AddText(ImVec2(box.x, box.y), ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
      break;
    }
  }
  dl->PopClipRect();
  if (all.empty())
    dl->AddText(ImVec2(c.min.x + font, c.min.y + 2.5f * line), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                "no kernel timings yet: the dots appear after the first steps");
  if (hovered_dot) {
    wrapped_tooltip(dot_tooltip(*hovered_backend->run, hovered_backend->roof, *hovered_dot));
  }

  // The legend, under the chart: each backend's mark and its two ceilings, in its colour.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + size.y));
  std::vector<std::string> pieces;
  for (const auto& b : backends)
    pieces.push_back(fmt::format("{} {}: {} GB/s, {} GFLOP/s", b.run->name == "cpu" ? "squares" : "circles",
                                 backend_title(b.run->name), core::figure_text(b.roof.bandwidth_gbps),
                                 core::figure_text(b.roof.compute_gflops)));
  // One row when the pieces fit; else one row each in the two rows (the note gives way: the ceilings' figures are
  // what a picture of the chart must keep, at 1280x720 in presentation mode too).
  const float row_width = ImGui::GetContentRegionAvail().x;
  float needed = 0;
  for (const auto& p : pieces) needed += ImGui::CalcTextSize(p.c_str()).x + font;
  const bool stacked = backends.size() == 2 && needed > row_width;
  for (size_t i = 0; i < backends.size(); ++i) {
    if (i && !stacked) ImGui::SameLine(0, font);
    const float share = stacked ? row_width : (row_width - font * static_cast<float>(backends.size())) /
                                              static_cast<float>(std::max<size_t>(1, backends.size()));
    text_line(pieces[i], backend_color(backends[i].run->name),
              std::max(font, std::min(share, ImGui::CalcTextSize(pieces[i].c_str()).x + 1)));
  }
  if (stacked) return;
  std::string note = "hover a dot for its figures";
  if (!transfers.empty()) note += " · upload_batch, host to device (a transfer, not a kernel): " + transfers;
  if (!off_chart.empty()) {
    note += " · 0 FLOP, not drawn:";
    for (const auto& k : off_chart) note += " " + k;
  }
  text_line(note, ImGui::GetColorU32(ImGuiCol_TextDisabled));
}

}  // namespace ui
