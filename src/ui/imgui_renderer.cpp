// The shared half of the window and the offscreen renderer: render pass, ImGui context, ImGui's Vulkan backend.
#include "ui/imgui_renderer.hpp"

#include <backends/imgui_impl_vulkan.h>
#include <fmt/format.h>
#include <imgui.h>

#include <atomic>
#include <cstdio>

#include "core/error.hpp"

namespace ui {

namespace {

// The backend reports failed Vulkan calls through a C callback; the first failure is kept and thrown by record().
std::atomic<VkResult> g_backend_result{VK_SUCCESS};

void on_backend_result(VkResult result) {
  if (result >= 0) return;
  VkResult expected = VK_SUCCESS;
  g_backend_result.compare_exchange_strong(expected, result);
  std::fprintf(stderr, "trainscope: ImGui's Vulkan backend: a Vulkan call failed: %s\n", vk::result_name(result));
}

}  // namespace

vk::Handle<VkRenderPass> create_render_pass(VkDevice device, VkFormat format, VkImageLayout final_layout) {
  VkAttachmentDescription color{};
  color.format = format;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;  // every frame is drawn from a clear: old contents are dropped
  color.finalLayout = final_layout;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &ref;

  VkSubpassDependency deps[2]{};
  // Write-after-read on the image: the layout transition and clear must wait until the presentation engine is done
  // reading it (the acquire semaphore is waited at COLOR_ATTACHMENT_OUTPUT) and until an earlier screenshot copy
  // (TRANSFER) has read it. An execution dependency suffices for a read before a write.
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[0].srcAccessMask = 0;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  // Read-after-write: a copy recorded after the pass (screenshot / offscreen read-back) reads the finished frame.
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;

  VkRenderPassCreateInfo info{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  info.attachmentCount = 1;
  info.pAttachments = &color;
  info.subpassCount = 1;
  info.pSubpasses = &subpass;
  info.dependencyCount = 2;
  info.pDependencies = deps;
  VkRenderPass pass = VK_NULL_HANDLE;
  vk::check(vkCreateRenderPass(device, &info, nullptr, &pass), "vkCreateRenderPass (dashboard)");
  return vk::Handle<VkRenderPass>(pass, [device](VkRenderPass p) { vkDestroyRenderPass(device, p, nullptr); });
}

ImGuiRenderer::ContextOwner::ContextOwner() {
  if (ImGui::GetCurrentContext() != nullptr)
    throw core::Error(core::ErrorKind::Internal,
                      "the dashboard: an ImGui context already exists (one Window or OffscreenRenderer at a time)");
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is saved with ui::Settings, not to ./imgui.ini
  io.LogFilename = nullptr;
}

ImGuiRenderer::ContextOwner::~ContextOwner() { ImGui::DestroyContext(); }

ImGuiRenderer::ImGuiRenderer(vk::GraphicsContext& gpu, VkRenderPass render_pass, const StyleOptions& style)
    : gpu_(gpu), render_pass_(render_pass), style_(style) {
  VkDevice dev = gpu.device();
  // ImGui 1.86 allocates one combined image sampler set per backend init (the font texture); room for a few more.
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 8};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pi.maxSets = 8;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk::check(vkCreateDescriptorPool(dev, &pi, nullptr, &pool), "vkCreateDescriptorPool (ImGui)");
  descriptor_pool_ =
      vk::Handle<VkDescriptorPool>(pool, [dev](VkDescriptorPool p) { vkDestroyDescriptorPool(dev, p, nullptr); });
  apply_style(style_);
  init_backend();
}

ImGuiRenderer::~ImGuiRenderer() {
  vkQueueWaitIdle(gpu_.queue());  // the backend's buffers may still be read by the last frame
  shutdown_backend();
}

void ImGuiRenderer::init_backend() {
  ImGui_ImplVulkan_InitInfo info{};
  info.Instance = gpu_.instance();
  info.PhysicalDevice = gpu_.physical_device();
  info.Device = gpu_.device();
  info.QueueFamily = gpu_.queue_family();
  info.Queue = gpu_.queue();
  info.DescriptorPool = descriptor_pool_.get();
  info.Subpass = 0;
  // ImageCount is the number of vertex/index buffer sets the backend cycles through, one per RenderDrawData: with
  // kFramesInFlight sets, a set is reused only after the fence of the frame that last used it was waited on.
  info.MinImageCount = kFramesInFlight;
  info.ImageCount = kFramesInFlight;
  info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
  info.CheckVkResultFn = on_backend_result;
  if (!ImGui_ImplVulkan_Init(&info, render_pass_))
    throw core::Error(core::ErrorKind::Vulkan, "Vulkan: ImGui's Vulkan backend failed to initialize");
  backend_ = true;
  try {
    gpu_.run_one_shot([](VkCommandBuffer cmd) { ImGui_ImplVulkan_CreateFontsTexture(cmd); });
  } catch (...) {
    shutdown_backend();
    throw;
  }
  ImGui_ImplVulkan_DestroyFontUploadObjects();
}

void ImGuiRenderer::shutdown_backend() {
  if (!backend_) return;
  ImGui_ImplVulkan_Shutdown();
  // ImGui 1.86 cannot free its font descriptor set itself: return it (and any other) to the pool.
  vkResetDescriptorPool(gpu_.device(), descriptor_pool_.get(), 0);
  backend_ = false;
}

void ImGuiRenderer::set_style(const StyleOptions& style) {
  // ImGui 1.86 has no call to replace only the font texture: re-create the backend's objects around a new atlas.
  vk::check(vkQueueWaitIdle(gpu_.queue()), "vkQueueWaitIdle (dashboard, font change)");
  shutdown_backend();
  style_ = style;
  apply_style(style_);
  init_backend();
}

VkClearColorValue ImGuiRenderer::clear_color() const {
  if (style_.presentation) return {{0.94f, 0.94f, 0.94f, 1.0f}};
  return {{0.09f, 0.09f, 0.11f, 1.0f}};
}

void ImGuiRenderer::record(VkCommandBuffer cmd, VkRenderPass render_pass, VkFramebuffer framebuffer,
                           VkExtent2D extent) {
  VkClearValue clear{};
  clear.color = clear_color();
  VkRenderPassBeginInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rp.renderPass = render_pass;
  rp.framebuffer = framebuffer;
  rp.renderArea = {{0, 0}, extent};
  rp.clearValueCount = 1;
  rp.pClearValues = &clear;
  vkCmdBeginRenderPass(cmd, &rp, VK_SUBPASS_CONTENTS_INLINE);
  if (ImDrawData* data = ImGui::GetDrawData()) ImGui_ImplVulkan_RenderDrawData(data, cmd);
  vkCmdEndRenderPass(cmd);
  if (VkResult r = g_backend_result.exchange(VK_SUCCESS); r != VK_SUCCESS)
    vk::check(r, "ImGui_ImplVulkan_RenderDrawData");
}

}  // namespace ui
