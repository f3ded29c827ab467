// The dashboard's layout rules (see layout.hpp).
#include "ui/layout.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "ui/dashboard.hpp"  // the tabs (kTabs, tab_title)

namespace ui {

LayoutMetrics layout_metrics(float width, float height) {
  const ImGuiStyle& style = ImGui::GetStyle();
  LayoutMetrics m;
  m.width = width;
  m.height = height;
  m.font = ImGui::GetFontSize();
  m.text_line = ImGui::GetTextLineHeightWithSpacing();
  m.header_line = std::round(m.font * (1.0f + kHeaderLineSpacing));
  // The views' tab strip: every title in one row (Dashboard::draw_tabs: each title with kTabPaddingEm of padding on
  // either side, ItemInnerSpacing between them); where the plots cannot give that much (compute_layout keeps them at
  // 30% of the width) the strip wraps onto a second row. The controls' widest row: the batch field, its label and the
  // four presets, with a font size to spare. Plus the panel's padding.
  float tabs = -style.ItemInnerSpacing.x;
  for (Tab t : kTabs)
    tabs += ImGui::CalcTextSize(tab_title(t)).x + 2 * kTabPaddingEm * m.font + style.ItemInnerSpacing.x;
  float batch_row = 3.5f * m.font + ImGui::CalcTextSize("batch").x + 5 * style.ItemSpacing.x;
  for (const char* b : {"32", "128", "512", "2048"}) batch_row += ImGui::CalcTextSize(b).x + 2 * style.FramePadding.x;
  m.views_min_width = std::max(tabs, batch_row + m.font) + 2 * style.WindowPadding.x;
  m.frame_row = ImGui::GetFrameHeightWithSpacing();
  m.padding_x = style.WindowPadding.x;
  m.padding_y = style.WindowPadding.y;
  m.spacing_x = style.ItemSpacing.x;
  m.spacing_y = style.ItemSpacing.y;
  return m;
}

DashboardLayout compute_layout(const LayoutMetrics& m) {
  DashboardLayout l;
  l.min_loss_canvas = kMinPlotShare * m.height;
  const float inner = m.height - 2 * m.padding_y;  // the dashboard window's content height
  // Below the header: a separator (its line and the spacing around it).
  const float separator = m.spacing_y + 1;
  // The plots' bordered panel: its padding, one header row (x-axis, Log y, legend), then the loss canvas.
  const float plot_overhead = 2 * m.padding_y + m.frame_row;
  bool found = false;
  for (int lines = 4; lines >= 2 && !found; --lines) {
    for (bool bar : {true, false}) {
      const float header = static_cast<float>(lines) * m.header_line;
      const float bar_height = bar ? m.frame_row : 0;
      const float body = inner - header - separator - bar_height - m.spacing_y;
      if (body - plot_overhead >= l.min_loss_canvas) {
        l.header_lines = lines;
        l.header_height = header;
        l.quick_bar = bar;
        l.bar_height = bar_height;
        l.body_height = body;
        found = true;
        break;
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
    l.plots_width = std::floor(width * 0.38f);
    l.controls_width = std::floor(width * 0.28f);
  } else {
    // The views keep their narrowest useful width; the plots take the rest, up to 52%.
    l.plots_width = std::floor(std::min(width * 0.52f, width - m.views_min_width - m.spacing_x));  // SameLine's gap
    l.plots_width = std::max(l.plots_width, std::floor(width * 0.3f));
  }
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
