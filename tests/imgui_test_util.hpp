// A headless ImGui for tests (test_ui_plot_widget, test_app_layout_fit): a real context and font atlas, with what a
// renderer backend would set up, and no window or GPU.
#pragma once
#include <imgui.h>

namespace test {

// An ImGui context for one test (1280x720, 60 frames a second), destroyed with the object.
struct HeadlessImGui {
  HeadlessImGui() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini in the test's working folder
    io.DisplaySize = ImVec2(1280, 720);
    io.DeltaTime = 1.0f / 60;
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // as imgui_impl_vulkan: meshes beyond 64K vertices
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~HeadlessImGui() { ImGui::DestroyContext(); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;
};

}  // namespace test
