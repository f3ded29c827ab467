// Shared drawing helpers of the panels.
#include "ui/panel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  dl->AddText(ImVec2(p.x + ImGui::GetStyle().FramePadding.x, p.y + (h - ImGui::GetTextLineHeight()) * 0.5f),
              ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
  ImGui::Dummy(ImVec2(w, h));
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace ui
