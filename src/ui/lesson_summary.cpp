// The summary slide of a lesson ("What we saw today"): every claim the lesson judged, with the figures it was judged
// on and what ran then, as a table in the dashboard's body (and so in the slide's picture, NAME.png).
#include <fmt/format.h>
#include <imgui.h>

#include "ui/dashboard.hpp"
#include "ui/text_fit.hpp"

namespace ui {

void draw_lesson_summary(const DashboardView& view) {
  ImGui::TextUnformatted(view.summary_title.empty() ? "What we saw today" : view.summary_title.c_str());
  ImGui::Separator();
  if (view.summary.empty()) {
    text_wrapped("This lesson judged no claim: it measured nothing to compare.");
    return;
  }
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("summary", 4, flags)) return;
  ImGui::TableSetupColumn("Point", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("What we saw", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn("Figures", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableSetupColumn("Measured with", ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableHeadersRow();
  for (const LessonSummaryRow& r : view.summary) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", r.point);
    ImGui::TableNextColumn();
    text_wrapped(r.text);  // whole words: never "67." and "1k" on two lines
    ImGui::TableNextColumn();
    // The two figures by name (what the claim compared), then the outcome: what a reader of the handout checks.
    // Each figure by its measurement's name (the part after '@', which the caption's reader knows) and its value;
    // the whole expression is the cell's tooltip and in the CSV.
    auto short_name = [](const std::string& figure) {
      const size_t at = figure.find('@');
      return at == std::string::npos ? figure : figure.substr(at + 1);
    };
    if (r.outcome == "not measured")
      text_wrapped("not measured");
    else
      text_wrapped(fmt::format("{}: {}\n{}: {}\n-> {}", short_name(r.first), r.first_text,
                               r.second.empty() ? "threshold" : short_name(r.second), r.second_text, r.outcome));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.claim.c_str());
    ImGui::TableNextColumn();
    text_wrapped(r.settings);
  }
  ImGui::EndTable();
}

}  // namespace ui
