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
  // Line width, times the plot's (a font size / 8). A series drawn under another one that may coincide with it
  // (the CPU's loss under the GPU's, step for step) is drawn wider: it shows as an outline around the one on top.
  float width = 1.0f;
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
// stays put while the run grows) and shows an "Auto-fit" checkbox in the header; it or a double-click turns it back
// on. The header row stays short for a projector: [the caller's own items] [Auto-fit when off] Log y (?); the legend
// sits at the right of the y-axis label's row, above the data.
class Plot {
 public:
  Plot() = default;
  Plot(std::string x_label, std::string y_label);

  // Draws the header row (header_prefix's items, the Auto-fit checkbox while auto-fit is off, Log y, help; an item
  // that does not fit goes to another row) and the plot below it as one block of `size` pixels: a component <= 0
  // means the available width/height plus that amount (ImGui's item size convention). The canvas (the y-axis label
  // and the legend, the data area, tick labels, the x-axis label) takes what the header leaves.
  // Call between ImGui::Begin and ImGui::End. `id` must be unique within the window.
  void draw(const char* id, std::span<const PlotSeries> series, std::span<const PlotMarker> markers,
            ImVec2 size = ImVec2(0, 0), const std::function<void()>& header_prefix = {});

  // The height in pixels of the header row(s) draw() will make at `width`, with a prefix of `prefix_width` pixels
  // (its items and their spacing), in the current font and style.
  float header_height(float width, float prefix_width = 0) const;

  void set_axis_labels(std::string x_label, std::string y_label);
  bool auto_fit() const { return auto_fit_; }
  void set_auto_fit(bool on) { auto_fit_ = on; }
  // x values are whole numbers (epochs): ticks at least 1 apart.
  void set_integer_x(bool on) { integer_x_ = on; }
  // The header's own items: the Auto-fit checkbox (while off), Log y and the "(?)" help (on by default). A caller that
  // offers them itself (its header_prefix, with set_auto_fit, set_log_y and help_text) turns them off, and the
  // header is its prefix alone: one row whatever the state.
  void set_header_items(bool on) { header_items_ = on; }
  // How to zoom, pan and fit, for a tooltip.
  static const char* help_text();
  bool log_y() const { return log_y_; }
  void set_log_y(bool on) { log_y_ = on; }
  Range x_view() const { return x_view_; }
  Range y_view() const { return y_view_; }
  void set_view(Range x, Range y);  // turns auto-fit off
  // Auto-fit shows x up to `x` at most (0: all the data): "loss by step" fits the slower side's steps, so that its
  // curve is not squeezed into the left edge by the faster side's thousands of steps.
  void set_fit_x_limit(double x) { fit_x_limit_ = x; }
  bool hidden(std::string_view label) const { return hidden_.contains(label); }
  void set_hidden(std::string_view label, bool hide);

  // The data area's screen rectangle as of the last draw() (for tests, screenshots and overlays).
  ImVec2 plot_min() const { return plot_min_; }
  ImVec2 plot_max() const { return plot_max_; }
  // The canvas (data area with its tick and axis labels, the header row excluded) as of the last draw().
  ImVec2 canvas_min() const { return canvas_min_; }
  ImVec2 canvas_max() const { return canvas_max_; }

 private:
  enum class Region { Data, XAxis, YAxis };
  struct Frame;  // one draw()'s rectangles, axis maps and ticks (plot.cpp)

  void draw_header(float right_edge, const std::function<void()>& prefix);
  // The rows of the header's own items after a prefix of `prefix_width` pixels, in a row `width` wide.
  int header_rows(float width, float prefix_width) const;
  // The legend's entries, right-aligned on the y-axis label's row of the canvas (clickable: hide / show).
  void draw_legend(std::span<const PlotSeries> series, ImVec2 canvas_min, ImVec2 canvas_max);
  float legend_width(std::span<const PlotSeries> series) const;
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
  double fit_x_limit_ = 0;
  bool log_y_ = false;
  bool integer_x_ = false;
  bool header_items_ = true;
  Range x_view_{0, 1}, y_view_{0, 1};
  std::set<std::string, std::less<>> hidden_;
  Region drag_region_ = Region::Data;
  ImVec2 plot_min_{0, 0}, plot_max_{0, 0};
  ImVec2 canvas_min_{0, 0}, canvas_max_{0, 0};
  float legend_width_ = 0;  // of the last draw(), for the y label beside it

  // Scratch buffers reused from frame to frame, so drawing a million-point series allocates nothing.
  Downsampled columns_;
  std::vector<std::size_t> indices_;
  std::vector<ImVec2> points_;
};

}  // namespace ui
