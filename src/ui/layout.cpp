// The dashboard's layout rules (see layout.hpp).
#include "ui/layout.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "ui/text_fit.hpp"

namespace ui {

LayoutMetrics layout_metrics(float width, float height, int caption_lines) {
  const ImGuiStyle& style = ImGui::GetStyle();
  LayoutMetrics m;
  m.width = width;
  m.height = height;
  m.font = ImGui::GetFontSize();
  m.text_line = ImGui::GetTextLineHeightWithSpacing();
  m.header_line = std::round(m.font * (1.0f + kHeaderLineSpacing));
  // The views' narrowest useful width: the controls' widest row (the batch field, its label and the four presets),
  // with a font size to spare, plus the panel's padding. (The tab titles no longer count: those that do not fit in
  // one row are in the More menu.)
  float batch_row = 3.5f * m.font + ImGui::CalcTextSize("batch").x + 5 * style.ItemSpacing.x;
  for (const char* b : {"32", "128", "512", "2048"}) batch_row += ImGui::CalcTextSize(b).x + 2 * style.FramePadding.x;
  m.views_min_width = batch_row + m.font + 2 * style.WindowPadding.x;
  m.frame_row = ImGui::GetFrameHeightWithSpacing();
  m.padding_x = style.WindowPadding.x;
  m.padding_y = style.WindowPadding.y;
  m.spacing_x = style.ItemSpacing.x;
  m.spacing_y = style.ItemSpacing.y;
  m.caption_line = std::round(kCaptionScale * m.font * 1.15f);
  m.caption_lines = caption_lines;
  return m;
}

float caption_band_padding(const LayoutMetrics& m) { return std::round(0.2f * m.font); }

int caption_band_lines(const std::string& caption, float width) {
  if (caption.empty()) return 0;
  return static_cast<int>(wrap_words(caption, kCaptionScale * ImGui::GetFontSize(), width, kMaxCaptionLines + 1).size());
}

DashboardLayout compute_layout(const LayoutMetrics& m) {
  DashboardLayout l;
  l.min_loss_canvas = kMinPlotShare * m.height;
  const float inner = m.height - 2 * m.padding_y;  // the dashboard window's content height
  // Below the header: a separator (its line and the spacing around it).
  const float separator = m.spacing_y + 1;
  // The plots' bordered panel: its padding, one header row (x-axis, Log y, legend), then the loss canvas.
  const float plot_overhead = 2 * m.padding_y + m.frame_row;
  // The caption band of n lines: its lines, its padding above and below, and the spacing before the body.
  auto caption = [&](int n) {
    return n > 0 ? static_cast<float>(n) * m.caption_line + 2 * caption_band_padding(m) + m.spacing_y : 0.0f;
  };
  bool found = false;
  // The caption's lines first (what the class reads), then the header's, then the quick bar; the plot's share
  // always.
  // In a lesson the header keeps 3 lines: its third (loss, test accuracy) is what the plot shows, and the tab beside
  // the plot needs the height the caption takes.
  const int most_lines = m.caption_lines > 0 ? 3 : 4;
  for (int cap = m.caption_lines; cap >= (m.caption_lines > 0 ? 1 : 0) && !found; --cap) {
    for (int lines = most_lines; lines >= 2 && !found; --lines) {
      for (bool bar : {true, false}) {
        const float header = static_cast<float>(lines) * m.header_line;
        const float bar_height = bar ? m.frame_row : 0;
        const float body = inner - header - separator - caption(cap) - bar_height - m.spacing_y;
        if (body - plot_overhead >= l.min_loss_canvas) {
          l.header_lines = lines;
          l.header_height = header;
          l.caption_lines = cap;
          l.caption_height = caption(cap);
          l.quick_bar = bar;
          l.bar_height = bar_height;
          l.body_height = body;
          found = true;
          break;
        }
      }
    }
  }
  if (!found) {  // not even 2 lines and no bar leave 40%: keep both, the plot takes the rest
    l.header_lines = 2;
    l.header_height = 2 * m.header_line;
    l.quick_bar = false;
    l.bar_height = 0;
    l.body_height = std::max(0.0f, inner - l.header_height - separator - m.spacing_y);
  }
  const float width = m.width - 2 * m.padding_x;
  l.controls_column = m.font > 0 && m.width >= kThreeColumnsEm * m.font;
  if (l.controls_column) {
    l.plots_width = std::ceil(m.width * kMinPlotWidthShare);
    l.controls_width = std::floor(width * 0.22f);
    return l;
  }
  // The views keep their narrowest useful width (the Controls' rows), the plots take the rest up to 52%, and at least
  // half the window's width wherever that leaves the views their width (from 1280x720 in presentation mode up) and
  // always in a lesson (its caption is about the plots); 30% at the least.
  l.plots_width = std::floor(std::min(width * 0.52f, width - m.views_min_width - m.spacing_x));  // SameLine's gap
  l.plots_width = std::max(l.plots_width, std::floor(width * 0.3f));
  if (m.caption_lines > 0) l.plots_width = std::max(l.plots_width, std::ceil(m.width * kMinPlotWidthShare));
  return l;
}

std::vector<int> visible_tabs(const std::vector<float>& widths, int selected, float row, float gap, float more) {
  const int n = static_cast<int>(widths.size());
  std::vector<int> shown;
  float used = 0;  // the shown titles and the gaps between them
  auto room = [&](float w) { return used + (shown.empty() ? 0 : gap) + w; };
  for (int i = 0; i < n; ++i) {
    if (room(widths[static_cast<size_t>(i)]) > row) break;
    used = room(widths[static_cast<size_t>(i)]);
    shown.push_back(i);
  }
  if (static_cast<int>(shown.size()) == n) return shown;
  // Not all fit: make room for the More button, then for the selected title.
  const float limit = row - gap - more;
  auto width_of = [&](const std::vector<int>& s) {
    float w = 0;
    for (size_t k = 0; k < s.size(); ++k) w += widths[static_cast<size_t>(s[k])] + (k ? gap : 0);
    return w;
  };
  while (!shown.empty() && width_of(shown) > limit) shown.pop_back();
  const bool has_selected = std::find(shown.begin(), shown.end(), selected) != shown.end();
  if (!has_selected && selected >= 0 && selected < n) {
    std::vector<int> with = shown;
    with.push_back(selected);
    while (with.size() > 1 && width_of(with) > limit) with.erase(with.end() - 2);
    shown = with;
  }
  return shown;
}

}  // namespace ui
