// The plot widget of the dashboard (loss curves, step times, throughput over the run), drawn with ImDrawList because
// ImPlot is not packaged in Debian 12. The math (storage, ticks, downsampling, transforms) is in ui/plot_math.hpp;
// this is the view: layout, drawing and the interaction state of one plot.
#pragma once
#include <imgui.h>

#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ui/plot_math.hpp"

namespace ui {

// One curve to draw. `data` is only read during draw(); null or empty data is listed in the legend, nothing drawn.
struct PlotSeries {
  const char* label = "";  // legend text, and the key of the hidden set: keep it the same from frame to frame
  ImU32 color = IM_COL32_WHITE;
  const Series* data = nullptr;
};

// A labelled vertical line at a data x, e.g. where the batch size changed ("batch 128 -> 256").
struct PlotMarker {
  double x = 0;
  const char* label = "";
  ImU32 color = IM_COL32_WHITE;
};

// A line plot with its own view state, in the manner of Dear ImGui's example panels: keep one Plot per chart and call
// draw() every frame. Sizes follow ImGui::GetFontSize(), so the caller's font scaling makes it readable on a projector.
//
// Interaction (also shown in the widget's "(?)" tooltip):
//   mouse wheel over the data: zoom x and y about the cursor; Shift + wheel: y only; Ctrl + wheel: x only;
//   wheel over the x-axis labels: x only; over the y-axis labels: y only;
//   left drag: pan (started on an axis' labels: that axis only);
//   double-click: back to auto-fit;  click a legend entry: hide / show that series;
//   hover: crosshair, and a tooltip with the nearest point (by x) of each visible series.
// Auto-fit (on by default) shows all the data of the visible series; any zoom or pan turns it off (the view then
// stays put while the run grows); the "Auto-fit" checkbox or a double-click turns it back on.
class Plot {
 public:
  Plot() = default;
  Plot(std::string x_label, std::string y_label);

  // Draws the header row (Auto-fit and Log y checkboxes, help, legend) and the plot below it as one block of `size`
  // pixels: a component <= 0 means the available width/height plus that amount (ImGui's item size convention), with
  // at least 12 lines of height. Call between ImGui::Begin and ImGui::End. `id` must be unique within the window.
  void draw(const char* id, std::span<const PlotSeries> series, std::span<const PlotMarker> markers,
            ImVec2 size = ImVec2(0, 0));

  void set_axis_labels(std::string x_label, std::string y_label);
  bool auto_fit() const { return auto_fit_; }
  void set_auto_fit(bool on) { auto_fit_ = on; }
  // x values are whole numbers (epochs): ticks at least 1 apart.
  void set_integer_x(bool on) { integer_x_ = on; }
  bool log_y() const { return log_y_; }
  void set_log_y(bool on) { log_y_ = on; }
  Range x_view() const { return x_view_; }
  Range y_view() const { return y_view_; }
  void set_view(Range x, Range y);  // turns auto-fit off
  bool hidden(std::string_view label) const { return hidden_.contains(label); }
  void set_hidden(std::string_view label, bool hide);

  // The data area's screen rectangle as of the last draw() (for tests, screenshots and overlays).
  ImVec2 plot_min() const { return plot_min_; }
  ImVec2 plot_max() const { return plot_max_; }

 private:
  enum class Region { Data, XAxis, YAxis };
  struct Frame;  // one draw()'s rectangles, axis maps and ticks (plot.cpp)

  void draw_header(std::span<const PlotSeries> series, float right_edge);
  void fit_views(std::span<const PlotSeries> series);
  Frame layout(ImVec2 canvas_min, ImVec2 canvas_max) const;
  void handle_input(const Frame& f, bool hovered, bool active, bool activated);
  void draw_axes(ImDrawList* dl, const Frame& f) const;
  void draw_series(ImDrawList* dl, const Frame& f, const PlotSeries& s);
  void draw_markers(ImDrawList* dl, const Frame& f, std::span<const PlotMarker> markers) const;
  void draw_hover(ImDrawList* dl, const Frame& f, std::span<const PlotSeries> series) const;
  Region region_at(const Frame& f, ImVec2 p) const;
  bool visible(const PlotSeries& s) const { return s.data != nullptr && !hidden(s.label ? s.label : ""); }

  std::string x_label_, y_label_;
  bool auto_fit_ = true;
  bool log_y_ = false;
  bool integer_x_ = false;
  Range x_view_{0, 1}, y_view_{0, 1};
  std::set<std::string, std::less<>> hidden_;
  Region drag_region_ = Region::Data;
  ImVec2 plot_min_{0, 0}, plot_max_{0, 0};

  // Scratch buffers reused from frame to frame, so drawing a million-point series allocates nothing.
  Downsampled columns_;
  std::vector<std::size_t> indices_;
  std::vector<ImVec2> points_;
};

}  // namespace ui
