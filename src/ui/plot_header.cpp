// The plot widget's header and legend: the row above the canvas (a caller's prefix, Auto-fit while it is off, Log y,
// the help tooltip), wrapped to the width it is given, and the legend entries that hide or show a series on a click.
#include <imgui_internal.h>  // ImGui::FindRenderedTextEnd

#include <algorithm>
#include <vector>

#include "ui/plot.hpp"
#include "ui/text_fit.hpp"

namespace ui {

namespace {
float legend_entry_width(const char* label) {
  return 0.8f * ImGui::GetFontSize() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}
}  // namespace

const char* Plot::help_text() {
  return "Wheel: zoom x and y about the cursor (Shift: y only, Ctrl: x only;\n"
         "       over the x or y axis labels: that axis only)\n"
         "Drag: pan (from an axis' labels: that axis only)\n"
         "Double-click: auto-fit again\n"
         "Click a legend entry: hide / show that series\n"
         "Zooming or panning turns auto-fit off (an Auto-fit checkbox appears).";
}

int Plot::header_rows(float width, float prefix_width) const {
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  std::vector<float> items;
  if (header_items_) {
    if (!auto_fit_) items.push_back(checkbox_width("Auto-fit"));
    items.push_back(checkbox_width("Log y"));
    items.push_back(ImGui::CalcTextSize("(?)").x);
  }
  int rows = 1;
  float x = prefix_width;
  for (float w : items) {
    if (x > 0 && x + w > width) {
      ++rows;
      x = 0;
    }
    x += w + spacing;
  }
  return rows;
}

float Plot::header_height(float width, float prefix_width) const {
  return static_cast<float>(header_rows(width, prefix_width)) * ImGui::GetFrameHeightWithSpacing();
}

void Plot::draw_header(float right_edge, const std::function<void()>& prefix) {
  bool first = true;
  // The next item on this row when it fits before right_edge, else on the next row.
  auto next = [&](float width) {
    if (!first && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width <= right_edge) ImGui::SameLine();
    first = false;
  };
  if (prefix) {
    prefix();
    first = false;
  }
  if (!header_items_) {
    if (first) ImGui::Dummy(ImVec2(0, ImGui::GetFrameHeight()));  // the header row is there, empty
    return;
  }
  if (!auto_fit_) {  // shown only while it is off: the usual state needs no checkbox on a projector
    next(checkbox_width("Auto-fit"));
    ImGui::Checkbox("Auto-fit", &auto_fit_);
  }
  next(checkbox_width("Log y"));
  ImGui::Checkbox("Log y", &log_y_);
  next(ImGui::CalcTextSize("(?)").x);
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help_text());
}

float Plot::legend_width(std::span<const PlotSeries> series) const {
  const float font = ImGui::GetFontSize();
  float w = 0;
  for (const PlotSeries& s : series) w += legend_entry_width(s.label ? s.label : "") + (w > 0 ? font : 0.0f);
  return w;
}

void Plot::draw_legend(std::span<const PlotSeries> series, ImVec2 canvas_min, ImVec2 canvas_max) {
  const float font = ImGui::GetFontSize();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float swatch = 0.8f * font, height = 1.2f * font;
  float x = std::max(canvas_min.x, canvas_max.x - legend_width(series));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* label = series[i].label ? series[i].label : "";
    if (x + font > canvas_max.x) break;  // a canvas too narrow for every entry (huge type): those that fit
    const float width = std::min(legend_entry_width(label), canvas_max.x - x);
    ImGui::PushID(static_cast<int>(i));
    ImGui::SetCursorScreenPos(ImVec2(x, canvas_min.y));
    const bool shown = !hidden(label);
    if (ImGui::InvisibleButton("##legend", ImVec2(width, height))) set_hidden(label, shown);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(shown ? "Click to hide %s" : "Click to show %s", label);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetItemRectMin();
    if (ImGui::IsItemHovered())
      dl->AddRectFilled(p, ImGui::GetItemRectMax(), ImGui::GetColorU32(ImGuiCol_FrameBgHovered));
    const ImVec2 s0(p.x, p.y + 0.5f * (height - swatch)), s1(s0.x + swatch, s0.y + swatch);
    if (shown) {
      dl->AddRectFilled(s0, s1, series[i].color);
    } else {
      dl->AddRect(s0, s1, series[i].color);
    }
    dl->AddText(ImVec2(s1.x + style.ItemInnerSpacing.x, p.y + 0.5f * (height - font)),
                ImGui::GetColorU32(shown ? ImGuiCol_Text : ImGuiCol_TextDisabled), label,
                ImGui::FindRenderedTextEnd(label));
    ImGui::PopID();
    x += width + font;
  }
}

}  // namespace ui
