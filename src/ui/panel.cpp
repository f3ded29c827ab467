// Shared drawing helpers of the panels.
#include "ui/panel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ui/text_fit.hpp"

namespace ui {

std::string format_duration(double s) {
  if (s < 0) return "-";
  if (s < 1) return fmt::format("{:.0f} ms", s * 1000);
  if (s < 60) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{} min {:02d} s", static_cast<int>(s / 60), static_cast<int>(std::fmod(s, 60)));
  return fmt::format("{} h {:02d} min", static_cast<int>(s / 3600), static_cast<int>(std::fmod(s, 3600) / 60));
}

std::string format_rate(double v) {
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

std::string precision_text(const core::BackendRun& run) {
  std::string text = core::to_string(run.config.precision);
  if (run.config.precision != core::Precision::FP16) return text;
  if (run.loss_scale > 0) text += fmt::format(", loss scale {:g}", run.loss_scale);
  text += fmt::format(", {} step{} skipped", run.skipped_steps, run.skipped_steps == 1 ? "" : "s");
  return text;
}

void bar(float fraction, ImU32 color, const std::string& text, float height) {
  const float h = height > 0 ? height : ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float f = std::clamp(fraction, 0.0f, 1.0f);
  if (f > 0) dl->AddRectFilled(p, ImVec2(p.x + std::max(2.0f, w * f), p.y + h), color);
  const float pad = ImGui::GetStyle().FramePadding.x;
  const std::string shown = fit_text(text, w - 2 * pad);
  dl->AddText(ImVec2(p.x + pad, p.y + (h - ImGui::GetTextLineHeight()) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text),
              shown.c_str());
  ImGui::Dummy(ImVec2(w, h));
  if (shown != text && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

std::vector<std::string> kernel_names(const DashboardView& view) {
  std::vector<std::string> names;
  for (const auto& run : view.runs)
    for (const auto& r : run.kernels.rows())
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
  return names;
}

void kernel_bar_table(const char* id, const DashboardView& view,
                      const std::function<std::string(const core::BackendRun&)>& heading,
                      const std::function<KernelBar(const core::BackendRun&, const std::string&)>& bar_of) {
  const int n = static_cast<int>(view.runs.size());
  if (n == 0) return;
  std::vector<std::string> names = kernel_names(view);
  // Rows that do not fit the panel's height are left out, the smallest bars first, and named in a last row (as the
  // tables drop their least important columns rather than scroll): a projector shows every bar that matters whole.
  const float row_height = ImGui::GetTextLineHeight() + 3.0f;  // a line, the cells' 1-pixel padding, a pixel to spare
  const int fit = static_cast<int>(ImGui::GetContentRegionAvail().y / row_height) - 1;  // the headings' row
  std::vector<std::string> left_out;
  if (fit >= 3 && static_cast<int>(names.size()) > fit) {
    std::vector<std::pair<float, std::string>> by_size;
    for (const auto& name : names) {
      float largest = 0;
      for (const auto& run : view.runs) largest = std::max(largest, bar_of(run, name).fraction);
      by_size.emplace_back(largest, name);
    }
    std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = static_cast<size_t>(fit - 1); i < by_size.size(); ++i) left_out.push_back(by_size[i].second);
    std::erase_if(names, [&](const std::string& k) {
      return std::find(left_out.begin(), left_out.end(), k) != left_out.end();
    });
  }
  const float width = ImGui::GetContentRegionAvail().x;
  float name_width = 0;
  for (const auto& name : names) name_width = std::max(name_width, ImGui::CalcTextSize(name.c_str()).x);
  name_width = std::min(name_width + ImGui::GetFontSize() * 0.5f,
                        std::max(0.3f * width, width - static_cast<float>(n) * 5.0f * ImGui::GetFontSize()));
  // Rows as tight as text lines: eleven kernels fit a projector's panel.
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(0.25f * ImGui::GetFontSize(), 1.0f));
  if (!ImGui::BeginTable(id, n + 1, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoPadOuterX)) {
    ImGui::PopStyleVar();
    return;
  }
  ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthFixed, name_width);
  for (int i = 0; i < n; ++i) ImGui::TableSetupColumn(view.runs[size_t(i)].name.c_str(), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  for (const auto& run : view.runs) {
    ImGui::TableNextColumn();
    text_line(heading(run), backend_color(run.name));
  }
  for (const auto& name : names) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string shown = fit_text_middle(name, ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(shown.c_str());
    if (shown != name && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
    for (const auto& run : view.runs) {
      ImGui::TableNextColumn();
      const KernelBar b = bar_of(run, name);
      if (!b.present) continue;
      const float room = ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().FramePadding.x;
      bar(b.fraction, backend_color(run.name), fit_pieces({b.text, b.detail}, room, "  "));
      if (!b.tooltip.empty() && ImGui::IsItemHovered()) wrapped_tooltip(b.tooltip, 30.0f);
    }
  }
  if (!left_out.empty()) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    std::string all, tip = "The smallest bars, left out for room (a larger window or smaller type shows them):";
    for (const auto& k : left_out) {
      all += (all.empty() ? "" : ", ") + k;
      tip += "\n" + k + ":";
      for (const auto& run : view.runs)
        if (const KernelBar b = bar_of(run, k); b.present) tip += fmt::format("  {} {}", backend_title(run.name), b.text);
    }
    text_line(fmt::format("+{} smaller: {}", left_out.size(), all), ImGui::GetColorU32(ImGuiCol_TextDisabled),
              ImGui::GetContentRegionAvail().x);
    if (ImGui::IsItemHovered()) wrapped_tooltip(tip, 30.0f);
  }
  ImGui::EndTable();
  ImGui::PopStyleVar();
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) wrapped_tooltip(text, 30.0f);
}

}  // namespace ui
