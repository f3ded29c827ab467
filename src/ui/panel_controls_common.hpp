// What the Controls tab (panel_controls.cpp) and the quick bar (panel_quick_bar.cpp) share.
#pragma once
#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>
#include <thread>

#include "core/settings_schema.hpp"
#include "ui/panel.hpp"

namespace ui::controls {

// The place of `value` among a Choice row's spellings (core/settings_schema.hpp), 0 when it is none of them.
inline int choice_index(const core::Setting& row, const std::string& value) {
  const auto names = row.choices();
  const auto at = std::find(names.begin(), names.end(), value);
  return at == names.end() ? 0 : static_cast<int>(at - names.begin());
}

// A combo of a Choice row's spellings, in the row's order; true when the user picked another one (`index`).
inline bool choice_combo(const char* id, const core::Setting& row, int& index) {
  const std::vector<std::string> names = row.choices();
  return ImGui::Combo(id, &index, [](void* data, int i, const char** text) {
    *text = (*static_cast<const std::vector<std::string>*>(data))[static_cast<size_t>(i)].c_str();
    return true;
  }, const_cast<std::vector<std::string>*>(&names), static_cast<int>(names.size()));
}

// `cfg` with a Choice row set to its `index`-th spelling.
inline core::TrainConfig with_choice(core::TrainConfig cfg, const core::Setting& row, int index) {
  row.set(cfg, row.choices().at(static_cast<size_t>(std::clamp(index, 0, int(row.choices().size()) - 1))));
  return cfg;
}

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
