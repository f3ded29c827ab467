// The dashboard's layout rules (see layout.hpp).
#include "ui/layout.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace ui {

LayoutMetrics layout_metrics(float width, float height) {
  const ImGuiStyle& style = ImGui::GetStyle();
  LayoutMetrics m;
  m.width = width;
  m.height = height;
  m.font = ImGui::GetFontSize();
  m.text_line = ImGui::GetTextLineHeightWithSpacing();
  m.header_line = std::round(m.font * (1.0f + kHeaderLineSpacing));
  // The tab bar (the first four titles, each with its frame padding, and the spacing between; more tabs, such as
  // Sweep and Boundary, shrink the titles to fit: ImGuiTabBarFlags_FittingPolicyResizeDown) and the controls' widest
  // row (the batch field, its label and the four presets), plus the panel's padding.
  float tabs = 0;
  for (const char* t : {"Controls", "Kernels", "Memory", "Bandwidth"})
    tabs += ImGui::CalcTextSize(t).x + 2 * style.FramePadding.x + style.ItemInnerSpacing.x;
  float batch_row = 3.5f * m.font + ImGui::CalcTextSize("batch").x + 5 * style.ItemSpacing.x;
  for (const char* b : {"32", "128", "512", "2048"}) batch_row += ImGui::CalcTextSize(b).x + 2 * style.FramePadding.x;
  m.views_min_width = std::max(tabs, batch_row) + 2 * style.WindowPadding.x + m.font;  // a font size to spare
  m.frame_row = ImGui::GetFrameHeightWithSpacing();
  m.padding_x = style.WindowPadding.x;
  m.padding_y = style.WindowPadding.y;
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
    l.plots_width = std::floor(std::min(width * 0.52f, width - m.views_min_width - m.spacing_y));
    l.plots_width = std::max(l.plots_width, std::floor(width * 0.3f));
  }
  return l;
}

}  // namespace ui
