// ui::OffscreenRenderer: renders dashboard frames into an offscreen image and reads them back, with no window, no
// GLFW and no display at all (CI, `trainscope` screenshots from a headless server, tests). Same ImGui Vulkan
// backend, render pass and style code as ui::Window (ui/imgui_renderer.hpp); only the target differs.
#pragma once
#include <memory>

#include "ui/frame.hpp"
#include "ui/imgui_renderer.hpp"
#include "ui/style.hpp"
#include "vk/graphics_context.hpp"

namespace ui {

struct OffscreenOptions {
  int width = 1600;         // pixels, >= 1
  int height = 900;         // pixels, >= 1
  int device_index = -1;    // -1: the best device, as for the trainer
  bool validation = false;  // VK_LAYER_KHRONOS_validation (tests)
  StyleOptions style;
};

class OffscreenRenderer {
 public:
  // Throws core::Error(InvalidArgument) for a size outside 1..16384, core::Error(Vulkan) without a usable device,
  // core::Error(Internal) when another Window/OffscreenRenderer (an ImGui context) exists.
  explicit OffscreenRenderer(const OffscreenOptions& options);
  ~OffscreenRenderer();
  OffscreenRenderer(const OffscreenRenderer&) = delete;
  OffscreenRenderer& operator=(const OffscreenRenderer&) = delete;

  // Runs `frames` ImGui frames (at least 1; ImGui fits auto-sized windows to their contents over the first two)
  // of width x height pixels, each with io.DeltaTime 1/60 s and the mouse outside, and returns the last one as RGBA.
  // Waits for each frame's fence (its own device only). Throws core::Error(Vulkan) when a Vulkan call fails.
  Image render(const DrawFn& draw, int frames = 2);

  // New fonts and style for the next render() (rebuilds and uploads the font atlas).
  void set_style(const StyleOptions& style) { renderer_->set_style(style); }
  const StyleOptions& style() const { return renderer_->style(); }
  const vk::GraphicsContext& gpu() const { return gpu_; }
  int width() const { return static_cast<int>(width_); }
  int height() const { return static_cast<int>(height_); }

 private:
  void record(VkCommandBuffer cmd, bool read_back);

  uint32_t width_;
  uint32_t height_;
  vk::GraphicsContext gpu_;
  vk::Handle<VkRenderPass> render_pass_;
  vk::ColorTarget target_;
  vk::Handle<VkFramebuffer> framebuffer_;
  vk::HostReadBuffer readback_;
  vk::Handle<VkCommandBuffer> cmd_;
  vk::Handle<VkFence> fence_;
  std::unique_ptr<ImGuiRenderer> renderer_;  // last: shut down first, while the device is alive
};

}  // namespace ui
