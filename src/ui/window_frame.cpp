// The dashboard window's frame loop: kFramesInFlight frames in flight, one fence each; each frame paced, built with
// ImGui, recorded (with a screenshot's copy when one is asked for), submitted and presented.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <fmt/format.h>
#include <imgui.h>

#include <cfloat>
#include <chrono>
#include <optional>

#include "core/error.hpp"
#include "ui/screenshot.hpp"
#include "ui/window.hpp"

namespace ui {

void Window::record(FrameSlot& slot, uint32_t image, bool capture) {
  VkCommandBuffer cmd = slot.cmd.get();
  vk::check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer (window)");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk::check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer (window)");
  renderer_->record(cmd, render_pass_.get(), swapchain_->framebuffer(image), swapchain_->extent());

  if (capture) {
    VkImageMemoryBarrier to_copy{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    // Read-after-write: the copy reads the finished frame; the image moves from the layout the render pass left
    // (PRESENT_SRC) to the one a copy source needs.
    to_copy.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    to_copy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    to_copy.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    to_copy.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    to_copy.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_copy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_copy.image = swapchain_->image(image);
    to_copy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &to_copy);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {swapchain_->extent().width, swapchain_->extent().height, 1};
    vkCmdCopyImageToBuffer(cmd, swapchain_->image(image), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback_.handle(), 1,
                           &region);
    // Write-after-read on the layout: back to PRESENT_SRC only once the copy has read the image; the present
    // waits on the render_done semaphore, which covers everything before it.
    VkImageMemoryBarrier to_present = to_copy;
    to_present.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    to_present.dstAccessMask = 0;
    to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    // Read-after-write by the host: the copy's writes become visible to the host once this slot's fence signals.
    VkBufferMemoryBarrier to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.buffer = readback_.handle();
    to_host.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &to_present);
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &to_host, 0,
                         nullptr);
  }
  vk::check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer (window)");
}

// Paces the frames (max_fps_), handles the window's events, and times the frame; false when there is nothing to draw
// into (minimized). Re-creates the swapchain where the window's size changed.
bool Window::begin_frame() {
  if (max_fps_ > 0 && last_frame_start_) {
    using Seconds = std::chrono::duration<double>;
    const auto next =
        *last_frame_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(Seconds(1.0 / max_fps_));
    for (auto now = std::chrono::steady_clock::now(); now < next; now = std::chrono::steady_clock::now())
      glfwWaitEventsTimeout(Seconds(next - now).count());
  }
  glfwPollEvents();
  collect_screenshot();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_.get(), &w, &h);
  if (w == 0 || h == 0 || glfwGetWindowAttrib(window_.get(), GLFW_ICONIFIED)) {
    // Minimized: nothing to draw into; sleep until an event (or 100 ms) instead of spinning.
    glfwWaitEventsTimeout(0.1);
    last_frame_start_.reset();  // the time spent minimized is not a frame time
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  if (last_frame_start_) timer_.add(std::chrono::duration<double, std::milli>(start - *last_frame_start_).count());
  last_frame_start_ = start;

  if (pending_style_) {
    renderer_->set_style(*pending_style_);
    pending_style_.reset();
  }
  const VkExtent2D extent = swapchain_->extent();
  if (recreate_ || extent.width != uint32_t(w) || extent.height != uint32_t(h)) recreate_swapchain();

  return true;
}

// Builds the frame's ImGui draw data on the CPU (nothing Vulkan is pending if draw() misbehaves); returns whether
// this frame is captured for a screenshot.
bool Window::build_frame(const DrawFn& draw) {
  const bool capture = capture_requested_ && !capture_pending_ && swapchain_->readable();
  ImGui_ImplVulkan_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // A captured frame is for a slide: no hover tooltip or highlight where the mouse happens to be.
  if (capture) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  const auto build_start = std::chrono::steady_clock::now();
  ImGui::NewFrame();
  if (capture && !footer_.empty())
    with_footer(draw, footer_)();
  else if (draw)
    draw();
  ImGui::Render();
  const auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  build_timer_.add(ms_since(build_start));

  return capture;
}

// The swapchain image this frame draws into, waited for on the slot's image_ready semaphore; none when the swapchain
// is out of date (the frame is skipped and the swapchain re-created).
std::optional<uint32_t> Window::acquire_image(FrameSlot& slot) {
  uint32_t image = 0;
  VkResult r = vkAcquireNextImageKHR(gpu_->device(), swapchain_->handle(), static_cast<uint64_t>(kGpuTimeoutS * 1e9),
                                     slot.image_ready.get(), VK_NULL_HANDLE, &image);
  if (r == VK_TIMEOUT || r == VK_NOT_READY)
    throw vk::Error(vk::Failure::Timeout,
                    fmt::format("Vulkan: the display gave the window no image to draw into within {:.0f} s (a hung "
                                "GPU or driver)",
                                kGpuTimeoutS),
                    r);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {  // resized between the size check and now: skip this frame
    recreate_ = true;
    return std::nullopt;
  }
  if (r == VK_SUBOPTIMAL_KHR)
    recreate_ = true;  // still presentable: draw it, re-create next frame
  else
    vk::check(r, "vkAcquireNextImageKHR");

  return image;
}

// Submits the slot's command buffer (signalling its fence) and presents the image; a capture is then pending in
// this slot. The time from submit to the return of present is the frame's present time.
void Window::submit_and_present(uint32_t slot_index, uint32_t image, bool capture) {
  FrameSlot& slot = slots_[slot_index];
  VkCommandBuffer cmd = slot.cmd.get();
  VkSemaphore ready = slot.image_ready.get();
  VkSemaphore done = swapchain_->render_done(image);
  // The clear/draw must not write the image before the presentation engine has released it.
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  const auto submit_start = std::chrono::steady_clock::now();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &ready;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &done;
  vk::check(vkQueueSubmit(gpu_->queue(), 1, &si, slot.fence.get()), "vkQueueSubmit (window)");
  if (capture) {
    capture_requested_ = false;
    capture_pending_ = true;
    capture_slot_ = slot_index;
  }

  VkSwapchainKHR swapchain = swapchain_->handle();
  VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  pi.waitSemaphoreCount = 1;
  pi.pWaitSemaphores = &done;
  pi.swapchainCount = 1;
  pi.pSwapchains = &swapchain;
  pi.pImageIndices = &image;
  const VkResult r = vkQueuePresentKHR(gpu_->queue(), &pi);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
    recreate_ = true;
  else
    vk::check(r, "vkQueuePresentKHR");
  const std::chrono::duration<double, std::milli> present_ms = std::chrono::steady_clock::now() - submit_start;
  present_timer_.add(present_ms.count());
}

void Window::frame(const DrawFn& draw) {
  if (!begin_frame()) return;
  const bool capture = build_frame(draw);
  const uint32_t slot_index = static_cast<uint32_t>(frame_index_ % kFramesInFlight);
  FrameSlot& slot = slots_[slot_index];
  VkFence fence = slot.fence.get();
  // This slot's previous frame (kFramesInFlight frames ago) must be done before its command buffer is re-recorded.
  // Bounded: a hung GPU ends the dashboard with a message (vk::Error Timeout) instead of freezing the window.
  gpu_->wait(fence, kGpuTimeoutS, "drawing a frame of the window");
  collect_screenshot();  // a capture in this slot is complete now; read it before the slot is reused
  const std::optional<uint32_t> image = acquire_image(slot);
  if (!image) return;
  if (capture) {
    capture_extent_ = swapchain_->extent();
    capture_bgra_ = swapchain_->bgra();
    const VkDeviceSize bytes = VkDeviceSize(capture_extent_.width) * capture_extent_.height * 4;
    if (readback_.size() != bytes) readback_ = vk::HostReadBuffer(*gpu_, bytes);  // idle: no capture in flight
  }
  vk::check(vkResetFences(gpu_->device(), 1, &fence), "vkResetFences (window)");
  record(slot, *image, capture);
  submit_and_present(slot_index, *image, capture);
  ++frame_index_;
}

}  // namespace ui
