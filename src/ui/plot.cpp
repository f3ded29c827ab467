// The plot widget: layout from the font size, input (wheel zoom, drag pan, double-click auto-fit), grid and ticks,
// downsampled lines, markers and the hover tooltip, all on the window's ImDrawList.
#include "ui/plot.hpp"

#include <imgui_internal.h>  // ImGui::CalcItemSize, ImGui::SetItemUsingMouseWheel

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ui/text_fit.hpp"

namespace ui {
namespace {

constexpr double kFitPadX = 0.02;  // auto-fit margins, as fractions of the data span
constexpr double kFitPadY = 0.06;
constexpr double kWheelZoom = 0.85;   // view span factor per wheel notch towards the user (< 1: zoom in)
constexpr int kPolylineChunk = 4096;  // points per AddPolyline call: one call's vertices stay far below 64K

ImU32 text_color(float alpha) { return ImGui::GetColorU32(ImGuiCol_Text, alpha); }

std::optional<Range> unite(std::optional<Range> a, std::optional<Range> b) {
  if (!a) return b;
  if (!b) return a;
  return Range{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
}

const char* name_or(const std::string& name, const char* fallback) { return name.empty() ? fallback : name.c_str(); }

// A view that can be drawn: finite, lo < hi, and lo > 0 on a log axis (set_view() may have been given anything).
Range drawable_view(Range r, bool log) {
  if (std::isfinite(r.lo) && std::isfinite(r.hi) && r.hi > r.lo && (!log || r.lo > 0)) return r;
  if (std::isfinite(r.lo) && (!log || r.lo > 0)) return fit_range({r.lo, r.lo}, 0, log);
  return log ? Range{0.1, 10} : Range{0, 1};
}

}  // namespace

struct Plot::Frame {
  ImVec2 canvas_min, canvas_max;  // the whole area under the header: data, tick labels and axis labels
  ImVec2 plot_min, plot_max;      // the data area
  AxisMap xmap, ymap;
  std::vector<Tick> xticks, yticks;
};

Plot::Plot(std::string x_label, std::string y_label) : x_label_(std::move(x_label)), y_label_(std::move(y_label)) {}

void Plot::set_axis_labels(std::string x_label, std::string y_label) {
  x_label_ = std::move(x_label);
  y_label_ = std::move(y_label);
}

void Plot::set_view(Range x, Range y) {
  x_view_ = x;
  y_view_ = y;
  auto_fit_ = false;
}

void Plot::set_hidden(std::string_view label, bool hide) {
  if (hide) {
    hidden_.emplace(label);
  } else if (auto it = hidden_.find(label); it != hidden_.end()) {
    hidden_.erase(it);
  }
}

void Plot::draw(const char* id, std::span<const PlotSeries> series, std::span<const PlotMarker> markers, ImVec2 size,
                const std::function<void()>& header_prefix) {
  ImGui::PushID(id);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 total = ImGui::CalcItemSize(size, avail.x, avail.y);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_header(origin.x + total.x, header_prefix);

  const ImVec2 canvas_min = ImGui::GetCursorScreenPos();
  // Never beyond the block the caller gave (the panel around it is laid out for that); at least a pixel, as an
  // InvisibleButton may not be empty.
  const ImVec2 canvas_max(std::max(origin.x + total.x, canvas_min.x + 1), std::max(origin.y + total.y, canvas_min.y + 1));
  canvas_min_ = canvas_min;
  canvas_max_ = canvas_max;
  // The legend first: where it overlaps the canvas, its entries take the clicks.
  legend_width_ = legend_width(series);
  draw_legend(series, canvas_min, canvas_max);
  ImGui::SetCursorScreenPos(canvas_min);
  ImGui::InvisibleButton("##canvas", ImVec2(canvas_max.x - canvas_min.x, canvas_max.y - canvas_min.y));
  const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive(), activated = ImGui::IsItemActivated();
  if (hovered) ImGui::SetItemUsingMouseWheel();  // the wheel zooms here instead of scrolling the window

  // Fit, then apply this frame's input to what the user saw, then lay out again with the view it produced: ticks and
  // lines are never a frame behind the mouse.
  if (auto_fit_) fit_views(series);
  if (log_y_) {
    std::optional<Range> positive;
    for (const PlotSeries& s : series) {
      if (visible(s)) positive = unite(positive, s.data->y_extent(true));
    }
    y_view_ = log_safe(y_view_, positive);
  }
  x_view_ = drawable_view(x_view_, false);
  y_view_ = drawable_view(y_view_, log_y_);
  handle_input(layout(canvas_min, canvas_max), hovered, active, activated);
  if (auto_fit_) fit_views(series);
  const Frame f = layout(canvas_min, canvas_max);
  plot_min_ = f.plot_min;
  plot_max_ = f.plot_max;

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(f.plot_min, f.plot_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  draw_axes(dl, f);
  dl->PushClipRect(f.plot_min, f.plot_max, true);
  for (const PlotSeries& s : series) {
    if (visible(s)) draw_series(dl, f, s);
  }
  draw_markers(dl, f, markers);
  if (hovered && !active && region_at(f, ImGui::GetIO().MousePos) == Region::Data) draw_hover(dl, f, series);
  dl->PopClipRect();
  dl->AddRect(f.plot_min, f.plot_max, ImGui::GetColorU32(ImGuiCol_Border));
  ImGui::PopID();
}

void Plot::fit_views(std::span<const PlotSeries> series) {
  std::optional<Range> x, y;
  for (const PlotSeries& s : series) {
    if (!visible(s)) continue;
    x = unite(x, s.data->x_extent());
    y = unite(y, s.data->y_extent(log_y_));
  }
  if (x && fit_x_limit_ > 0 && x->hi > fit_x_limit_ && x->lo < fit_x_limit_) x->hi = fit_x_limit_;
  if (x) x_view_ = fit_range(*x, kFitPadX, false);
  if (y) y_view_ = fit_range(*y, kFitPadY, log_y_);
}

Plot::Frame Plot::layout(ImVec2 canvas_min, ImVec2 canvas_max) const {
  const float font = ImGui::GetFontSize();
  Frame f;
  f.canvas_min = canvas_min;
  f.canvas_max = canvas_max;
  // Rows from the top: the y-axis label (written level, above the axis: no rotated text in ImGui), the data area,
  // the x tick labels, the x-axis label. Half a line above the data area when there is no y label keeps the top
  // tick label inside the canvas.
  const float top = canvas_min.y + 1.4f * font;  // the y label and the legend above the data
  const float bottom = std::max(top + 1, canvas_max.y - (x_label_.empty() ? 1.4f : 2.6f) * font);
  const int y_target = std::max(2, static_cast<int>((bottom - top) / (3 * font)));
  f.yticks = log_y_ ? log_ticks(y_view_, y_target) : linear_ticks(y_view_, y_target);
  float label_width = 2 * font;
  for (const Tick& t : f.yticks) label_width = std::max(label_width, ImGui::CalcTextSize(t.label.c_str()).x);
  const float left = canvas_min.x + label_width + 0.6f * font;
  const float right = std::max(left + 1, canvas_max.x - font);
  f.plot_min = ImVec2(left, top);
  f.plot_max = ImVec2(right, bottom);
  f.xmap = {x_view_, left, right, false};
  f.ymap = {y_view_, bottom, top, log_y_};

  // Fewer x ticks until neighbouring labels keep a line's height of space between them.
  int most = std::max(2, static_cast<int>((right - left) / (6 * font)));
  // Integer x (epochs): at most one tick per unit, so that no "2.5" epoch is labelled.
  if (integer_x_) most = std::max(1, std::min(most, static_cast<int>(std::floor(x_view_.span()))));
  for (int x_target = most; x_target >= 1; --x_target) {
    f.xticks = linear_ticks(x_view_, x_target);
    bool fits = true;
    for (std::size_t i = 1; i < f.xticks.size() && fits; ++i) {
      const double gap = f.xmap.to_pixel(f.xticks[i].value) - f.xmap.to_pixel(f.xticks[i - 1].value);
      const float half_widths = 0.5f * (ImGui::CalcTextSize(f.xticks[i].label.c_str()).x +
                                        ImGui::CalcTextSize(f.xticks[i - 1].label.c_str()).x);
      fits = gap >= half_widths + font;
    }
    if (fits) break;
  }
  return f;
}

Plot::Region Plot::region_at(const Frame& f, ImVec2 p) const {
  const bool in_x = p.x >= f.plot_min.x && p.x <= f.plot_max.x;
  const bool in_y = p.y >= f.plot_min.y && p.y <= f.plot_max.y;
  if (in_x && p.y > f.plot_max.y) return Region::XAxis;
  if (in_y && p.x < f.plot_min.x) return Region::YAxis;
  return Region::Data;
}

void Plot::handle_input(const Frame& f, bool hovered, bool active, bool activated) {
  const ImGuiIO& io = ImGui::GetIO();
  const Region region = region_at(f, io.MousePos);
  if (activated) drag_region_ = region;
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    auto_fit_ = true;
    return;
  }
  // Some platforms turn Shift + wheel into a horizontal wheel.
  const float wheel = io.MouseWheel != 0 ? io.MouseWheel : (io.KeyShift ? io.MouseWheelH : 0.0f);
  if (hovered && wheel != 0) {
    const bool zoom_x = region != Region::YAxis && !io.KeyShift;
    const bool zoom_y = region != Region::XAxis && !io.KeyCtrl;
    const double factor = std::pow(kWheelZoom, static_cast<double>(wheel));
    if (zoom_x) x_view_ = zoom(x_view_, f.xmap.to_data(io.MousePos.x), factor, false);
    if (zoom_y) y_view_ = zoom(y_view_, f.ymap.to_data(io.MousePos.y), factor, log_y_);
    auto_fit_ = auto_fit_ && !zoom_x && !zoom_y;
  }
  if (active && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
    // The data under the mouse follows it: dragging right shows what lay to the left.
    const double width = f.plot_max.x - f.plot_min.x, height = f.plot_max.y - f.plot_min.y;
    if (drag_region_ != Region::YAxis) x_view_ = pan(x_view_, -io.MouseDelta.x / width, false);
    if (drag_region_ != Region::XAxis) y_view_ = pan(y_view_, io.MouseDelta.y / height, log_y_);
    auto_fit_ = false;
  }
}

void Plot::draw_axes(ImDrawList* dl, const Frame& f) const {
  const float font = ImGui::GetFontSize();
  const ImU32 major = text_color(0.22f), minor = text_color(0.08f), label = text_color(1.0f);
  for (const Tick& t : f.yticks) {
    const auto y = static_cast<float>(f.ymap.to_pixel(t.value));
    if (!(y >= f.plot_min.y - 0.5f && y <= f.plot_max.y + 0.5f)) continue;
    dl->AddLine(ImVec2(f.plot_min.x, y), ImVec2(f.plot_max.x, y), t.major ? major : minor);
    if (t.label.empty()) continue;
    const ImVec2 size = ImGui::CalcTextSize(t.label.c_str());
    dl->AddText(ImVec2(f.plot_min.x - 0.3f * font - size.x, y - 0.5f * size.y), label, t.label.c_str());
  }
  for (const Tick& t : f.xticks) {
    const auto x = static_cast<float>(f.xmap.to_pixel(t.value));
    if (!(x >= f.plot_min.x - 0.5f && x <= f.plot_max.x + 0.5f)) continue;
    dl->AddLine(ImVec2(x, f.plot_min.y), ImVec2(x, f.plot_max.y), t.major ? major : minor);
    const ImVec2 size = ImGui::CalcTextSize(t.label.c_str());
    const float left = std::clamp(x - 0.5f * size.x, f.canvas_min.x, f.canvas_max.x - size.x);
    dl->AddText(ImVec2(left, f.plot_max.y + 0.2f * font), label, t.label.c_str());
  }
  if (!x_label_.empty()) {
    const ImVec2 size = ImGui::CalcTextSize(x_label_.c_str());
    const float centre = 0.5f * (f.plot_min.x + f.plot_max.x);
    dl->AddText(ImVec2(centre - 0.5f * size.x, f.plot_max.y + 1.4f * font), label, x_label_.c_str());
  }
  if (!y_label_.empty()) {  // left of the legend, shortened when they would meet
    const std::string y = fit_text(y_label_, f.canvas_max.x - f.canvas_min.x - legend_width_ - font);
    dl->AddText(f.canvas_min, label, y.c_str());
  }
}

void Plot::draw_series(ImDrawList* dl, const Frame& f, const PlotSeries& s) {
  const int columns = std::max(1, static_cast<int>(std::ceil(f.plot_max.x - f.plot_min.x)));
  downsample_min_max(*s.data, x_view_, columns, log_y_, columns_);
  drawable_indices(columns_, indices_);
  if (indices_.size() < 2) {  // a lone point: a dot, since a one-point polyline draws nothing
    if (indices_.size() == 1) {
      const std::size_t i = indices_[0];
      const ImVec2 p(static_cast<float>(f.xmap.to_pixel(s.data->x(i))),
                     static_cast<float>(f.ymap.to_pixel(s.data->y(i))));
      dl->AddCircleFilled(p, 0.2f * ImGui::GetFontSize(), s.color);
    }
    return;
  }
  // Pixels in double first: the points before and after the view can lie millions of pixels away, so they are moved
  // along their segment to just outside the plot edge, and y is kept within 100 plot heights (a far-off spike stays
  // a near-vertical line) so that float vertices keep their precision.
  const double x_lo = f.plot_min.x - 2, x_hi = f.plot_max.x + 2;
  const double height = f.plot_max.y - f.plot_min.y;
  const double y_lo = f.plot_min.y - 100 * height, y_hi = f.plot_max.y + 100 * height;
  points_.clear();
  double px_prev = 0, py_prev = 0;
  for (std::size_t k = 0; k < indices_.size(); ++k) {
    const std::size_t i = indices_[k];
    double px = f.xmap.to_pixel(s.data->x(i)), py = f.ymap.to_pixel(s.data->y(i));
    if (k == 1 && px_prev < x_lo && px > px_prev) {  // move the entering point to x_lo
      const double t = (x_lo - px_prev) / (px - px_prev);
      points_.back() =
          ImVec2(static_cast<float>(x_lo), static_cast<float>(std::clamp(py_prev + t * (py - py_prev), y_lo, y_hi)));
    }
    if (k + 1 == indices_.size() && px > x_hi && px > px_prev) {  // move the leaving point to x_hi
      const double t = (x_hi - px_prev) / (px - px_prev);
      py = py_prev + t * (py - py_prev);
      px = x_hi;
    }
    points_.emplace_back(static_cast<float>(px), static_cast<float>(std::clamp(py, y_lo, y_hi)));
    px_prev = px;
    py_prev = py;
  }
  const float thickness = std::max(1.0f, ImGui::GetFontSize() / 8);
  for (std::size_t start = 0; start + 1 < points_.size(); start += kPolylineChunk - 1) {
    const std::size_t n = std::min<std::size_t>(kPolylineChunk, points_.size() - start);
    dl->AddPolyline(points_.data() + start, static_cast<int>(n), s.color, ImDrawFlags_None, thickness * s.width);
  }
}

void Plot::draw_markers(ImDrawList* dl, const Frame& f, std::span<const PlotMarker> markers) const {
  const float font = ImGui::GetFontSize(), pad = 0.25f * font;
  // Newest first (the rightmost marker): when labels would pile up, the latest changes keep theirs and the older
  // ones keep only their line, so that the labels cover at most the top 40% of the plot.
  std::vector<std::size_t> order(markers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return markers[a].x > markers[b].x; });
  const float row_height = ImGui::GetTextLineHeight() + pad;
  const auto max_rows = static_cast<std::size_t>(std::max(1.0f, 0.4f * (f.plot_max.y - f.plot_min.y) / row_height));
  std::vector<float> row_start;  // left edge of the leftmost label in each row: labels that would overlap go lower
  for (std::size_t i : order) {
    const PlotMarker& m = markers[i];
    if (!x_view_.contains(m.x)) continue;
    const auto x = static_cast<float>(f.xmap.to_pixel(m.x));
    dl->AddLine(ImVec2(x, f.plot_min.y), ImVec2(x, f.plot_max.y), m.color, std::max(1.0f, font / 10));
    std::string text = m.label ? m.label : "";
    if (text.empty()) continue;
    // A label wider than the plot is shortened with an ellipsis (the hover tooltip of the x position and the
    // report keep the whole text); one that fits on neither side of its line is moved inside the plot.
    text = fit_text(text, f.plot_max.x - f.plot_min.x - 2 * pad);
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    float left = x + size.x + 2 * pad <= f.plot_max.x ? x + pad : x - pad - size.x;  // flip at the right edge
    left = std::clamp(left, f.plot_min.x + pad, std::max(f.plot_min.x + pad, f.plot_max.x - pad - size.x));
    std::size_t row = 0;
    while (row < row_start.size() && row_start[row] < left + size.x + 2 * pad) ++row;
    if (row >= max_rows) continue;  // no room left: the line alone
    if (row == row_start.size()) row_start.push_back(f.plot_max.x + pad);
    row_start[row] = left;
    const ImVec2 p(left, f.plot_min.y + pad + static_cast<float>(row) * row_height);
    dl->AddRectFilled(ImVec2(p.x - pad, p.y), ImVec2(p.x + size.x + pad, p.y + size.y),
                      ImGui::GetColorU32(ImGuiCol_WindowBg, 0.85f));
    dl->AddText(p, m.color, text.c_str());
  }
}

void Plot::draw_hover(ImDrawList* dl, const Frame& f, std::span<const PlotSeries> series) const {
  const float font = ImGui::GetFontSize();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  dl->AddLine(ImVec2(mouse.x, f.plot_min.y), ImVec2(mouse.x, f.plot_max.y), text_color(0.45f));
  dl->AddLine(ImVec2(f.plot_min.x, mouse.y), ImVec2(f.plot_max.x, mouse.y), text_color(0.45f));
  const double x = f.xmap.to_data(mouse.x);
  const char* x_name = name_or(x_label_, "x");
  const char* y_name = name_or(y_label_, "y");
  ImGui::BeginTooltip();
  ImGui::Text("%s %s", x_name, format_value(x).c_str());
  for (const PlotSeries& s : series) {
    if (!visible(s)) continue;
    const std::optional<NearestPoint> p = nearest_by_x(*s.data, x);
    if (!p) continue;
    ImGui::TextColored(ImColor(s.color), "%s", s.label ? s.label : "");
    ImGui::SameLine();
    ImGui::Text("%s %s at %s %s", y_name, format_value(p->y).c_str(), x_name, format_value(p->x).c_str());
    const double py = f.ymap.to_pixel(p->y);
    if (std::isfinite(py)) {
      dl->AddCircle(ImVec2(static_cast<float>(f.xmap.to_pixel(p->x)), static_cast<float>(py)), 0.3f * font, s.color, 0,
                    std::max(1.0f, font / 10));
    }
  }
  ImGui::EndTooltip();
}

}  // namespace ui
