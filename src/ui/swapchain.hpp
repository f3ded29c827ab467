// ui::Swapchain: the window's swapchain for one size: its images (with TRANSFER_SRC usage where the surface allows
// it, for screenshots), image views, framebuffers and one "rendering done" semaphore per image. A resize builds a
// new Swapchain from the old one (the driver may reuse its memory) and drops the old.
#pragma once
#include <vulkan/vulkan.h>

#include <vector>

#include "vk/graphics_context.hpp"
#include "vk/handle.hpp"

namespace ui {

// B8G8R8A8 or R8G8B8A8 UNORM in the sRGB colour space when offered (ImGui's colours are meant to be written
// as they are, without an sRGB encode), else the first format the surface lists.
VkSurfaceFormatKHR choose_surface_format(VkPhysicalDevice physical, VkSurfaceKHR surface);

class Swapchain {
 public:
  // extent: the framebuffer size in pixels (used when the surface leaves it to us). vsync: FIFO; else MAILBOX,
  // IMMEDIATE or FIFO, whichever the surface has first. old: the swapchain being replaced, or VK_NULL_HANDLE.
  // Throws core::Error(Vulkan).
  Swapchain(const vk::GraphicsContext& gpu, VkSurfaceKHR surface, VkSurfaceFormatKHR format, VkRenderPass pass,
            VkExtent2D extent, bool vsync, VkSwapchainKHR old);
  Swapchain(const Swapchain&) = delete;
  Swapchain& operator=(const Swapchain&) = delete;

  VkSwapchainKHR handle() const { return swapchain_.get(); }
  VkExtent2D extent() const { return extent_; }
  VkPresentModeKHR present_mode() const { return present_mode_; }
  uint32_t image_count() const { return static_cast<uint32_t>(images_.size()); }
  VkImage image(uint32_t i) const { return images_[i]; }
  VkFramebuffer framebuffer(uint32_t i) const { return framebuffers_[i].get(); }
  // Signalled by the frame that renders image i, waited by its present (one per image: a present may still be
  // waiting on it when another image's frame is submitted).
  VkSemaphore render_done(uint32_t i) const { return render_done_[i].get(); }
  // Whether images can be copied out (TRANSFER_SRC usage and an 8-bit RGBA/BGRA format).
  bool readable() const { return readable_; }
  bool bgra() const { return bgra_; }  // byte order of a read-back pixel: B, G, R, A

 private:
  vk::Handle<VkSwapchainKHR> swapchain_;  // first: destroyed after the views and framebuffers of its images
  VkExtent2D extent_{};
  VkPresentModeKHR present_mode_ = VK_PRESENT_MODE_FIFO_KHR;
  bool readable_ = false;
  bool bgra_ = false;
  std::vector<VkImage> images_;  // owned by the swapchain
  std::vector<vk::Handle<VkImageView>> views_;
  std::vector<vk::Handle<VkFramebuffer>> framebuffers_;
  std::vector<vk::Handle<VkSemaphore>> render_done_;
};

}  // namespace ui
