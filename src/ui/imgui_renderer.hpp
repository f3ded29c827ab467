// ui::ImGuiRenderer: what the window and the offscreen renderer share: the process's ImGui context, the ImGui
// Vulkan backend (pipeline, font texture) for one render pass, the style, and the render pass itself.
// Only one ImGuiRenderer (so one Window or one OffscreenRenderer) may exist at a time in a process: ImGui 1.86's
// backends keep their state in the current ImGui context.
#pragma once
#include <vulkan/vulkan.h>

#include "ui/style.hpp"
#include "vk/graphics_context.hpp"
#include "vk/handle.hpp"

namespace ui {

// Frames the CPU may record ahead of the GPU (double buffering): each has its own command buffer and fence, and
// ImGui's backend keeps as many vertex/index buffers.
inline constexpr uint32_t kFramesInFlight = 2;
// The longest the window (or an offscreen frame) waits for the GPU to draw a frame or for the display's next image:
// past it the GPU counts as hung, and the dashboard stops with a message instead of freezing.
inline constexpr double kGpuTimeoutS = 30;

// The one render pass of every dashboard frame: a single colour attachment of `format`, cleared, stored, left in
// `final_layout` (PRESENT_SRC_KHR for a swapchain, TRANSFER_SRC_OPTIMAL for an offscreen image read back).
vk::Handle<VkRenderPass> create_render_pass(VkDevice device, VkFormat format, VkImageLayout final_layout);

class ImGuiRenderer {
 public:
  // Creates the ImGui context (no imgui.ini file: layouts go through ui::Settings), applies `style`, initializes
  // ImGui's Vulkan backend for `render_pass` and uploads the font atlas (waits for gpu's queue).
  // Throws core::Error(Internal) when an ImGui context already exists, core::Error(Vulkan) on Vulkan failures.
  ImGuiRenderer(vk::GraphicsContext& gpu, VkRenderPass render_pass, const StyleOptions& style);
  ~ImGuiRenderer();
  ImGuiRenderer(const ImGuiRenderer&) = delete;
  ImGuiRenderer& operator=(const ImGuiRenderer&) = delete;

  // Rebuilds the fonts and style and uploads the new atlas. Between frames only; waits for the dashboard's own
  // queue to go idle (never for the trainer's device).
  void set_style(const StyleOptions& style);
  const StyleOptions& style() const { return style_; }
  // The background behind the panels, matching the style.
  VkClearColorValue clear_color() const;

  // Records into `cmd` the render pass `render_pass` on `framebuffer` (extent pixels), cleared to clear_color(), with
  // the draw data of the last ImGui::Render() inside it. What the pass leaves the image for (presenting, copying) is
  // the render pass's final layout. Throws core::Error(Vulkan) when the backend reported a failed Vulkan call (out
  // of memory, device lost).
  void record(VkCommandBuffer cmd, VkRenderPass render_pass, VkFramebuffer framebuffer, VkExtent2D extent);

 private:
  void init_backend();
  void shutdown_backend();

  struct ContextOwner {  // ImGui::CreateContext / DestroyContext, destroyed after the backend
    ContextOwner();
    ~ContextOwner();
    ContextOwner(const ContextOwner&) = delete;
    ContextOwner& operator=(const ContextOwner&) = delete;
  };

  vk::GraphicsContext& gpu_;
  VkRenderPass render_pass_;
  StyleOptions style_;
  ContextOwner context_;
  vk::Handle<VkDescriptorPool> descriptor_pool_;
  bool backend_ = false;
};

}  // namespace ui
