// Headless dashboard frames: an R8G8B8A8 colour image as the render target, copied into a host buffer after the
// last frame.
#include "ui/offscreen.hpp"

#include <backends/imgui_impl_vulkan.h>
#include <fmt/format.h>
#include <imgui.h>

#include <cfloat>
#include <cstring>

#include "core/error.hpp"

namespace ui {

namespace {

constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;  // the byte order of ui::Image: no swizzle on read-back

uint32_t checked_size(int pixels, const char* what) {
  if (pixels < 1 || pixels > 16384)
    throw core::Error(core::ErrorKind::InvalidArgument,
                      fmt::format("offscreen {} {} px: must be 1..16384", what, pixels));
  return static_cast<uint32_t>(pixels);
}

}  // namespace

OffscreenRenderer::OffscreenRenderer(const OffscreenOptions& options)
    : width_(checked_size(options.width, "width")),
      height_(checked_size(options.height, "height")),
      gpu_(vk::GraphicsOptions{options.device_index, options.validation, {}, false, {}}) {
  VkDevice dev = gpu_.device();
  render_pass_ = create_render_pass(dev, kFormat, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
  target_ = vk::ColorTarget(gpu_, width_, height_, kFormat);

  VkImageView view = target_.view();
  VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  fi.renderPass = render_pass_.get();
  fi.attachmentCount = 1;
  fi.pAttachments = &view;
  fi.width = width_;
  fi.height = height_;
  fi.layers = 1;
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  vk::check(vkCreateFramebuffer(dev, &fi, nullptr, &framebuffer), "vkCreateFramebuffer (offscreen)");
  framebuffer_ =
      vk::Handle<VkFramebuffer>(framebuffer, [dev](VkFramebuffer f) { vkDestroyFramebuffer(dev, f, nullptr); });
  readback_ = vk::HostReadBuffer(gpu_, VkDeviceSize(width_) * height_ * 4);

  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = gpu_.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vk::check(vkAllocateCommandBuffers(dev, &ai, &cmd), "vkAllocateCommandBuffers (offscreen)");
  VkCommandPool pool = gpu_.command_pool();
  cmd_ = vk::Handle<VkCommandBuffer>(cmd, [dev, pool](VkCommandBuffer c) { vkFreeCommandBuffers(dev, pool, 1, &c); });
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  vk::check(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence (offscreen)");
  fence_ = vk::Handle<VkFence>(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });

  renderer_ = std::make_unique<ImGuiRenderer>(gpu_, render_pass_.get(), options.style);
}

OffscreenRenderer::~OffscreenRenderer() { vkQueueWaitIdle(gpu_.queue()); }

void OffscreenRenderer::record(VkCommandBuffer cmd, bool read_back) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk::check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer (offscreen)");
  renderer_->record(cmd, render_pass_.get(), framebuffer_.get(), {width_, height_});
  if (read_back) {
    // The render pass leaves the image in TRANSFER_SRC_OPTIMAL and its outgoing dependency orders this copy after
    // the colour writes, so no image barrier is needed here.
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width_, height_, 1};
    vkCmdCopyImageToBuffer(cmd, target_.image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback_.handle(), 1, &region);
    // Read-after-write by the host: make the copy's writes visible to host reads after the fence.
    VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    bb.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    bb.buffer = readback_.handle();
    bb.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &bb, 0,
                         nullptr);
  }
  vk::check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer (offscreen)");
}

Image OffscreenRenderer::render(const DrawFn& draw, int frames) {
  if (frames < 1) frames = 1;
  VkDevice dev = gpu_.device();
  VkCommandBuffer cmd = cmd_.get();
  VkFence fence = fence_.get();
  for (int f = 0; f < frames; ++f) {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(width_), static_cast<float>(height_));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.DeltaTime = 1.0f / 60.0f;
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // no hover highlights in a headless frame
    ImGui_ImplVulkan_NewFrame();
    ImGui::NewFrame();
    if (draw) draw();
    ImGui::Render();

    const bool last = f == frames - 1;
    vk::check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer (offscreen)");
    record(cmd, last);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    vk::check(vkQueueSubmit(gpu_.queue(), 1, &si, fence), "vkQueueSubmit (offscreen)");
    // One frame at a time: the command buffer and the read-back buffer are reused by the next frame.
    gpu_.wait(fence, kGpuTimeoutS, "drawing an offscreen frame");  // bounded: a hung GPU is an error, not a hang
    vk::check(vkResetFences(dev, 1, &fence), "vkResetFences (offscreen)");
  }
  Image image;
  image.width = static_cast<int>(width_);
  image.height = static_cast<int>(height_);
  image.rgba.resize(size_t(width_) * height_ * 4);
  std::memcpy(image.rgba.data(), readback_.mapped(), image.rgba.size());
  for (size_t i = 3; i < image.rgba.size(); i += 4) image.rgba[i] = 255;  // opaque, whatever blending left in alpha
  return image;
}

}  // namespace ui
