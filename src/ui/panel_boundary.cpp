// The Boundary tab (see panel_boundary.hpp), drawn with ImDrawList: one square map per backend, side by side.
#include "ui/panel_boundary.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ui/dashboard_model.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

// Class colours: light for the map's cells, saturated for the points (up to 16 spiral arms).
ImU32 class_color(int k, int alpha) {
  static const ImU32 base[] = {IM_COL32(31, 119, 180, 255), IM_COL32(255, 127, 14, 255), IM_COL32(44, 160, 44, 255),
                               IM_COL32(214, 39, 40, 255),  IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                               IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255)};
  const ImU32 c = base[static_cast<size_t>(k) % (sizeof base / sizeof base[0])];
  return (c & 0x00FFFFFFu) | (static_cast<ImU32>(alpha) << 24);
}

void draw_map(const core::BackendRun& run, ImVec2 lo, float side) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const core::BackendRun::Boundary& b = run.boundary;
  const ImVec2 hi(lo.x + side, lo.y + side);
  dl->AddRectFilled(lo, hi, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const int n = b.grid.n;
  if (n > 0 && b.classes.size() == static_cast<size_t>(n * n)) {
    const float cell = side / static_cast<float>(n);
    for (int i = 0; i < n; ++i)  // row 0 is the bottom of the plane: drawn at the bottom
      for (int j = 0; j < n; ++j) {
        const ImVec2 a(lo.x + j * cell, hi.y - (i + 1) * cell);
        dl->AddRectFilled(a, ImVec2(a.x + cell + 0.5f, a.y + cell + 0.5f),
                          class_color(b.classes[static_cast<size_t>(i * n + j)], 90));
      }
    const float r = std::max(1.5f, side / 160.0f);
    for (size_t p = 0; p < b.labels.size(); ++p) {
      const float x = (b.points[2 * p] - b.grid.x0) / (b.grid.x1 - b.grid.x0);
      const float y = (b.points[2 * p + 1] - b.grid.y0) / (b.grid.y1 - b.grid.y0);
      dl->AddCircleFilled(ImVec2(lo.x + x * side, hi.y - y * side), r, class_color(b.labels[p], 255));
    }
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
  const float width = ImGui::GetContentRegionAvail().x, height = ImGui::GetContentRegionAvail().y;
  const size_t maps = view.runs.size();
  const float gap = font;
  // Side by side when they fit, else one above the other; each square, with a title line above it.
  const bool row = width >= height;
  const float title = ImGui::GetTextLineHeightWithSpacing();
  float side = row ? std::min((width - gap * (maps - 1)) / maps, height - title)
                   : std::min(width, (height - maps * title - gap * (maps - 1)) / maps);
  side = std::max(side, 4 * font);
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
  ImGui::Dummy(row ? ImVec2(maps * (side + gap), side + title) : ImVec2(side, maps * (side + title + gap)));
}

}  // namespace ui
