// The Boundary tab (see panel_boundary.hpp), drawn with ImDrawList: one square map per backend, side by side.
#include "ui/panel_boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ui/dashboard_model.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

// Class colours, none of them the backends' orange and blue (the titles above the maps use those), up to 8 arms
// before they repeat. The map's cells are the colour mixed with the background (opaque, so that neighbouring cells
// do not overlap into a visible grid); the points are the full colour with a dark rim.
ImU32 class_color(int k) {
  static const ImU32 base[] = {IM_COL32(120, 70, 200, 255), IM_COL32(20, 150, 100, 255), IM_COL32(215, 40, 70, 255),
                               IM_COL32(190, 150, 0, 255),  IM_COL32(0, 150, 170, 255), IM_COL32(140, 86, 75, 255),
                               IM_COL32(227, 90, 194, 255), IM_COL32(110, 110, 110, 255)};
  return base[static_cast<size_t>(k) % (sizeof base / sizeof base[0])];
}

ImU32 cell_color(int k, ImU32 background) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(class_color(k)), b = ImGui::ColorConvertU32ToFloat4(background);
  const float t = 0.38f;  // how much of the class colour
  return ImGui::GetColorU32(ImVec4(b.x + t * (c.x - b.x), b.y + t * (c.y - b.y), b.z + t * (c.z - b.z), 1.0f));
}

void draw_map(const core::BackendRun& run, ImVec2 lo, float side) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const core::BackendRun::Boundary& b = run.boundary;
  const ImVec2 hi(lo.x + side, lo.y + side);
  const ImU32 background = ImGui::GetColorU32(ImGuiCol_WindowBg);
  dl->AddRectFilled(lo, hi, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const int n = b.grid.n;
  if (n > 0 && b.classes.size() == static_cast<size_t>(n * n)) {
    // Cell edges on whole pixels, shared by neighbours: no gaps, no overlaps.
    auto edge_x = [&](int j) { return std::round(lo.x + side * static_cast<float>(j) / static_cast<float>(n)); };
    auto edge_y = [&](int i) { return std::round(hi.y - side * static_cast<float>(i) / static_cast<float>(n)); };
    for (int i = 0; i < n; ++i)  // row 0 is the bottom of the plane: drawn at the bottom
      for (int j = 0; j < n; ++j)
        dl->AddRectFilled(ImVec2(edge_x(j), edge_y(i + 1)), ImVec2(edge_x(j + 1), edge_y(i)),
                          cell_color(b.classes[static_cast<size_t>(i * n + j)], background));
    const float r = std::max(2.0f, side / 150.0f);
    for (size_t p = 0; p < b.labels.size(); ++p) {
      const float x = (b.points[2 * p] - b.grid.x0) / (b.grid.x1 - b.grid.x0);
      const float y = (b.points[2 * p + 1] - b.grid.y0) / (b.grid.y1 - b.grid.y0);
      const ImVec2 at(lo.x + x * side, hi.y - y * side);
      dl->AddCircleFilled(at, r + 1.0f, IM_COL32(20, 20, 20, 200));
      dl->AddCircleFilled(at, r, class_color(b.labels[p]));
    }
  } else {
    const char* wait = "waiting for its first map";
    const ImVec2 size = ImGui::CalcTextSize(wait);
    if (size.x < side)
      dl->AddText(ImVec2(lo.x + (side - size.x) / 2, lo.y + (side - size.y) / 2),
                  ImGui::GetColorU32(ImGuiCol_TextDisabled), wait);
  }
  dl->AddRect(lo, hi, ImGui::GetColorU32(ImGuiCol_Border));
}

}  // namespace

void BoundaryPanel::draw(const DashboardView& view) {
  bool any = false;
  for (const auto& r : view.runs) any = any || r.boundary.grid.n > 0;
  if (!any) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(view.config.dataset == "spiral"
                               ? "The decision boundary appears after the first steps."
                               : "The decision boundary is drawn for 2-D data: choose the spiral dataset in the "
                                 "Controls (Model), then Apply.");
    ImGui::PopTextWrapPos();
    return;
  }
  const float font = ImGui::GetFontSize();
  // Below the maps, one line says what they show (its height is kept free).
  const std::string legend = "shading: the class each backend's current weights predict; dots: training points";
  const float legend_height = ImGui::CalcTextSize(legend.c_str(), nullptr, false, ImGui::GetContentRegionAvail().x).y +
                              ImGui::GetStyle().ItemSpacing.y;
  const float width = ImGui::GetContentRegionAvail().x;
  const float height = ImGui::GetContentRegionAvail().y - legend_height;
  const size_t maps = view.runs.size();
  const float gap = font;
  // Side by side when they fit, else one above the other; each square, with a title line above it.
  const bool row = width >= height;
  const float title = ImGui::GetTextLineHeightWithSpacing();
  float side = row ? std::min((width - gap * (maps - 1)) / maps, height - title)
                   : std::min(width, (height - maps * title - gap * (maps - 1)) / maps);
  side = std::floor(std::max(side, 4 * font));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (size_t m = 0; m < maps; ++m) {
    const core::BackendRun& r = view.runs[m];
    const ImVec2 at = row ? ImVec2(origin.x + m * (side + gap), origin.y)
                          : ImVec2(origin.x, origin.y + m * (side + title + gap));
    ImGui::SetCursorScreenPos(at);
    ImGui::PushStyleColor(ImGuiCol_Text, backend_color(r.name));
    text_line(r.boundary.step >= 0 ? fmt::format("{}: step {}", backend_title(r.name), r.boundary.step)
                                   : std::string(backend_title(r.name)), 0, side);
    ImGui::PopStyleColor();
    draw_map(r, ImVec2(at.x, at.y + title), side);
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(row ? ImVec2(maps * (side + gap) - gap, side + title) : ImVec2(side, maps * (side + title + gap) - gap));
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", legend.c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace ui
