// What the Controls tab (panel_controls.cpp) and the quick bar (panel_quick_bar.cpp) share.
#pragma once
#include <imgui.h>

#include <algorithm>
#include <thread>

#include "ui/panel.hpp"

namespace ui::controls {

inline constexpr int kBatchPresets[] = {32, 128, 512, 2048};

inline int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

inline void post_batch(Controller& c, int batch) {
  run::Command cmd(run::Command::Kind::SetBatch);
  cmd.value = batch;
  c.post(cmd);
}

inline bool all_paused(const DashboardView& view) {
  bool paused = !view.runs.empty();
  for (const auto& r : view.runs) paused = paused && (r.paused || r.finished);
  return paused;
}

// A button that looks selected (the setting in force) or not.
inline bool toggle_button(const char* label, bool selected) {
  if (selected) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(ImGuiCol_ButtonActive));
  const bool clicked = ImGui::Button(label);
  if (selected) ImGui::PopStyleColor();
  return clicked;
}

}  // namespace ui::controls
