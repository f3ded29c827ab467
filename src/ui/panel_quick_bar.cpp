// The quick bar: the most used controls in one row along the bottom of the window, what is under way, the window's
// own CPU share and the Screenshot button.
#include <fmt/format.h>

#include "ui/panel_controls.hpp"
#include "ui/panel_controls_common.hpp"
#include "ui/panel_race.hpp"
#include "ui/text_fit.hpp"

namespace ui {
namespace {

using namespace controls;

// The first thing worth saying in the quick bar when there is no toast: a backend applying a change, a refusal.
std::string bar_status(const DashboardView& view) {
  if (view.peaks_measuring && view.peaks_training_between) return "measuring peaks between turns: " + view.peaks_stage;
  if (view.peaks_measuring) return "measuring peaks, training paused: " + view.peaks_stage;
  if (view.peaks_message.find("not measured") != std::string::npos) return view.peaks_message;
  for (const auto& r : view.runs)
    if (r.building || !r.error.empty() || (view.live && !pending_changes(r, view.config).empty()))
      return fmt::format("{}: {}", backend_title(r.name), backend_state_line(view, r));
  for (const auto& r : view.runs)
    if (r.status.find("refused") != std::string::npos) return fmt::format("{}: {}", backend_title(r.name), r.status);
  if (!view.session_status.empty()) return view.session_status;
  for (const auto& r : view.runs)
    if (!r.background.empty())
      return fmt::format("{}: {} in the background (not training time)", backend_title(r.name), r.background);
  return "";
}

}  // namespace

void Controls::draw_quick_bar(const DashboardView& view, Controller* controller, const std::string& toast) {
  Controller& c = controller ? *controller : null_controller();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const char* shot = "Screenshot (F12)";
  // The window's own CPU use, always in view, left of the Screenshot button: what the dashboard takes from training.
  const std::string cpu = view.window_cores >= 0
                              ? fmt::format("window {:.0f}%", 100 * view.window_cores / hardware_threads())
                              : std::string();
  const float cpu_width = cpu.empty() ? 0.0f : ImGui::CalcTextSize(cpu.c_str()).x + style.ItemSpacing.x;
  const float shot_width = button_width(shot) + cpu_width;
  // Room left on the row for an item of `width`, the Screenshot button kept at the right end.
  auto fits = [&](float width) {
    return ImGui::GetCursorScreenPos().x + width + style.ItemSpacing.x + shot_width <= right;
  };
  ImGui::BeginDisabled(controller == nullptr || !view.live);
  const bool pausing = view.pause_requested;
  if (ImGui::Button(pausing ? "Resume" : "Pause"))
    c.post(run::Command(pausing ? run::Command::Kind::Resume : run::Command::Kind::Pause));
  ImGui::SameLine();
  if (all_paused(view) && fits(button_width("Single step"))) {
    if (ImGui::Button("Single step")) c.post(run::Command(run::Command::Kind::SingleStep));
    ImGui::SameLine();
  }
  if (fits(button_width("Reset"))) {
    if (ImGui::Button("Reset")) c.reset(view.config);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Both backends start again with the settings shown.");
    ImGui::SameLine();
  }
  float presets = ImGui::CalcTextSize("batch").x;
  for (int b : kBatchPresets) presets += style.ItemSpacing.x + button_width(std::to_string(b).c_str());
  if (fits(presets)) {
    ImGui::TextUnformatted("batch");
    for (int b : kBatchPresets) {
      ImGui::SameLine();
      if (toggle_button(std::to_string(b).c_str(), view.config.batch == b)) post_batch(c, b);
    }
    ImGui::SameLine();
  }
  const float combo = ImGui::CalcTextSize("fp32").x + ImGui::GetFrameHeight() + 2 * style.FramePadding.x;
  if (fits(combo)) {
    draw_precision_combo(view, c, combo);
    ImGui::SameLine();
  }
  ImGui::EndDisabled();
  // The toast, else what is under way; greyed, shortened to the room left.
  const std::string status = toast.empty() ? bar_status(view) : toast;
  const float room = right - shot_width - style.ItemSpacing.x - ImGui::GetCursorScreenPos().x;
  if (room > ImGui::GetFontSize()) {
    ImGui::AlignTextToFramePadding();
    text_line(status.empty() ? std::string(" ") : status, ImGui::GetColorU32(ImGuiCol_TextDisabled), room);
    ImGui::SameLine();
  }
  ImGui::SetCursorScreenPos(ImVec2(right - shot_width, ImGui::GetCursorScreenPos().y));
  if (!cpu.empty()) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", cpu.c_str());
    if (ImGui::IsItemHovered())
      wrapped_tooltip(fmt::format(
          "The dashboard's own CPU use over the last seconds: {:.2f} of a core, {:.0f}% of this machine's {} hardware "
          "threads (every thread of trainscope but the training ones: drawing the window, and on a software GPU "
          "rasterizing it). It redraws when figures change, at most twice a second, and on input; training runs at "
          "a lower priority, so the window stays responsive.",
          view.window_cores, 100 * view.window_cores / hardware_threads(), hardware_threads()));
    ImGui::SameLine();
  }
  ImGui::BeginDisabled(controller == nullptr);
  if (ImGui::Button(shot)) c.request_screenshot();
  ImGui::EndDisabled();
}

}  // namespace ui
