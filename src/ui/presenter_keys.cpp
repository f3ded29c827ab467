// The teacher's keys: their meaning (a small state machine over the blank screen, the help overlay and the question
// before quitting a lesson) and the overlays drawn for them.
#include "ui/presenter_keys.hpp"

#include <imgui.h>

#include <algorithm>

namespace ui {

const std::vector<KeyHelpLine>& key_help() {
  static const std::vector<KeyHelpLine> lines = {
      {"Space, Right, Page Down", "next point of a lesson"},
      {"Left, Page Up", "the caption before"},
      {"B or .", "blank screen (again, or Space: back)"},
      {"P", "pause or resume training"},
      {"F11", "full screen, or back to a window"},
      {"F12", "screenshot (PNG)"},
      {"? or F1", "these keys, on screen"},
      {"Esc or Q", "quit (a lesson asks first)"},
  };
  return lines;
}

KeyAction PresenterKeys::press(Key key) {
  if (asking_to_quit_) {  // the answer to "quit the lesson?"
    asking_to_quit_ = false;
    return key == Key::Quit ? KeyAction::Quit : KeyAction::None;
  }
  if (help_ && (key == Key::Help || key == Key::Quit)) {  // Esc closes the help first
    help_ = false;
    return KeyAction::None;
  }
  if (blank_ && (key == Key::Next || key == Key::Back || key == Key::Blank)) {
    blank_ = false;
    return KeyAction::None;
  }
  switch (key) {
    case Key::Next: return KeyAction::Next;
    case Key::Back: return KeyAction::Back;
    case Key::Blank: blank_ = true; return KeyAction::None;
    case Key::FullScreen: return KeyAction::ToggleFullScreen;
    case Key::Pause: return KeyAction::TogglePause;
    case Key::Help: help_ = true; return KeyAction::None;
    case Key::Quit:
      if (!lesson_) return KeyAction::Quit;
      asking_to_quit_ = true;
      return KeyAction::None;
  }
  return KeyAction::None;
}

namespace {

// A box in the middle of the screen, above everything (the blank screen included).
bool begin_centered(const char* name) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowFocus();
  ImGui::SetNextWindowBgAlpha(0.97f);
  return ImGui::Begin(name, nullptr,
                      ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove |
                          ImGuiWindowFlags_NoSavedSettings);
}

}  // namespace

KeyAction PresenterKeys::draw() {
  KeyAction action = KeyAction::None;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (blank_) {
    // Black over the whole window, as a projector's blank button (a window, so that the help and the quit question
    // still show above it); a dim line says how to come back.
    ImGui::SetNextWindowPos(vp->Pos);
    ImGui::SetNextWindowSize(vp->Size);
    ImGui::SetNextWindowFocus();
    ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(0, 0, 0, 255));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
    if (ImGui::Begin("##blank", nullptr,
                     ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings)) {
      const char* back = "B or Space: back";
      const ImVec2 size = ImGui::CalcTextSize(back);
      ImGui::GetWindowDrawList()->AddText(
          ImVec2(vp->Pos.x + vp->Size.x - size.x - 8, vp->Pos.y + vp->Size.y - size.y - 6), IM_COL32(70, 70, 70, 255),
          back);
    }
    ImGui::End();
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
  }
  if (help_) {
    if (begin_centered("##keys")) {
      ImGui::TextUnformatted("Keys");
      ImGui::Separator();
      float column = 0;
      for (const auto& line : key_help()) column = std::max(column, ImGui::CalcTextSize(line.keys.c_str()).x);
      for (const auto& line : key_help()) {
        ImGui::TextUnformatted(line.keys.c_str());
        ImGui::SameLine(column + 2 * ImGui::GetStyle().ItemSpacing.x + ImGui::GetStyle().WindowPadding.x);
        ImGui::TextUnformatted(line.does.c_str());
      }
      ImGui::Separator();
      ImGui::TextDisabled("? or Esc: close");
    }
    ImGui::End();
  }
  if (asking_to_quit_) {
    if (begin_centered("##quit")) {
      ImGui::TextUnformatted("Quit the lesson?");
      ImGui::TextDisabled("Esc or Q again: quit · any other key: stay");
      if (ImGui::Button("Quit")) action = KeyAction::Quit, asking_to_quit_ = false;
      ImGui::SameLine();
      if (ImGui::Button("Stay")) asking_to_quit_ = false;
    }
    ImGui::End();
  }
  return action;
}

}  // namespace ui
