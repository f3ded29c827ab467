// The dashboard window: GLFW set-up, the frame loop (kFramesInFlight frames in flight, one fence each), swapchain
// re-creation, and screenshots copied out of the presented image.
#include "ui/window.hpp"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "platform/process.hpp"
#include "ui/screenshot.hpp"

namespace ui {

namespace {

std::string g_glfw_error;  // the last GLFW error, for the message of a failed set-up

void on_glfw_error(int code, const char* text) { g_glfw_error = fmt::format("{} (GLFW error {:#x})", text, code); }

[[noreturn]] void fail(const std::string& what) {
  throw core::Error(core::ErrorKind::Vulkan, fmt::format("cannot open the dashboard window: {}: {}", what,
                                                         g_glfw_error.empty() ? "no details" : g_glfw_error));
}

// Xlib's I/O error handler: called when the connection to the X server breaks (the server stopped or crashed, an
// xvfb-run ended). Xlib would then end the process with exit(1), and its own message names neither the program nor
// what to do; this says it in trainscope's voice first. It ends the process itself with _Exit(1): exit() runs the
// static destructors while the training workers, the Vulkan driver's threads and the swapchain still run, which
// crashed the process (SIGSEGV, rc 139) about one time in four. Looked up in the libX11 that GLFW already loaded
// (dlopen RTLD_NOLOAD), so that no X11 development files are needed to build; absent on Wayland.
int on_display_lost(void*) {
  const char* display = std::getenv("DISPLAY");
  std::fprintf(stderr,
               "trainscope: error: lost the connection to the display %s (the X server stopped or crashed); "
               "the dashboard ends without saving its settings\n",
               display ? display : "(unknown)");
  std::fflush(stdout);  // what the lesson printed so far
  std::_Exit(1);
}

void report_lost_display() {
  using Handler = int (*)(void*);
  using SetHandler = Handler (*)(Handler);
  if (auto set = reinterpret_cast<SetHandler>(platform::loaded_library_symbol("libX11.so.6", "XSetIOErrorHandler")))
    set(on_display_lost);
}

}  // namespace

Window::GlfwLibrary::GlfwLibrary() {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) fail("glfwInit failed");
  report_lost_display();
}

Window::GlfwLibrary::~GlfwLibrary() { glfwTerminate(); }

Window::PlatformBackend::PlatformBackend(GLFWwindow* window) {
  // install_callbacks: ImGui chains the key callback installed before it (F12), and restores it on shutdown.
  if (!ImGui_ImplGlfw_InitForVulkan(window, true)) fail("ImGui's GLFW backend failed to initialize");
}

Window::PlatformBackend::~PlatformBackend() { ImGui_ImplGlfw_Shutdown(); }

Window::Window(const WindowOptions& options) : vsync_(options.vsync), max_fps_(options.max_fps) {
  if (!glfwVulkanSupported()) fail("GLFW found no Vulkan loader");
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);  // Vulkan draws, not OpenGL
  glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // shown once it fits the screen
  GLFWwindow* window = glfwCreateWindow(std::max(options.width, 64), std::max(options.height, 64),
                                        options.title.c_str(), nullptr, nullptr);
  if (!window) fail("glfwCreateWindow failed");
  window_ = vk::Handle<GLFWwindow*>(window, [](GLFWwindow* w) { glfwDestroyWindow(w); });
  glfwSetWindowUserPointer(window, this);
  glfwSetKeyCallback(window, on_key);
  glfwSetFramebufferSizeCallback(window, on_framebuffer_size);
  // Every kind of input wakes the on-demand loop (ImGui's GLFW backend chains these: it sees the same events).
  glfwSetCursorPosCallback(window, [](GLFWwindow* w, double, double) { on_input(w); });
  glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int, int, int) { on_input(w); });
  glfwSetScrollCallback(window, [](GLFWwindow* w, double, double) { on_input(w); });
  glfwSetCharCallback(window, on_char);
  glfwSetWindowFocusCallback(window, [](GLFWwindow* w, int) { on_input(w); });
  glfwSetCursorEnterCallback(window, [](GLFWwindow* w, int) { on_input(w); });
  glfwSetWindowRefreshCallback(window, [](GLFWwindow* w) { on_input(w); });
  const int work_width = fit_to_work_area(options.fit_work_area);
  glfwShowWindow(window);

  vk::GraphicsOptions go;
  go.device_index = options.device_index;
  go.validation = options.validation;
  uint32_t ext_count = 0;
  const char** exts = glfwGetRequiredInstanceExtensions(&ext_count);
  if (!exts) fail("GLFW lists no Vulkan surface extension for this display");
  for (uint32_t i = 0; i < ext_count; ++i) go.instance_extensions.emplace_back(exts[i]);
  go.swapchain = true;
  go.can_present = [](VkInstance instance, VkPhysicalDevice physical, uint32_t family) {
    return glfwGetPhysicalDevicePresentationSupport(instance, physical, family) == GLFW_TRUE;
  };
  gpu_ = std::make_unique<vk::GraphicsContext>(go);

  VkInstance instance = gpu_->instance();
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  vk::check(glfwCreateWindowSurface(instance, window, nullptr, &surface), "glfwCreateWindowSurface");
  surface_ =
      vk::Handle<VkSurfaceKHR>(surface, [instance](VkSurfaceKHR s) { vkDestroySurfaceKHR(instance, s, nullptr); });
  VkBool32 supported = VK_FALSE;
  vk::check(vkGetPhysicalDeviceSurfaceSupportKHR(gpu_->physical_device(), gpu_->queue_family(), surface, &supported),
            "vkGetPhysicalDeviceSurfaceSupportKHR");
  if (!supported)
    throw core::Error(core::ErrorKind::Vulkan,
                      fmt::format("Vulkan: {} cannot present to this window", gpu_->info().name));
  surface_format_ = choose_surface_format(gpu_->physical_device(), surface);
  render_pass_ = create_render_pass(gpu_->device(), surface_format_.format, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
  recreate_swapchain();

  VkDevice dev = gpu_->device();
  VkCommandPool pool = gpu_->command_pool();
  for (FrameSlot& slot : slots_) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk::check(vkAllocateCommandBuffers(dev, &ai, &cmd), "vkAllocateCommandBuffers (window)");
    slot.cmd =
        vk::Handle<VkCommandBuffer>(cmd, [dev, pool](VkCommandBuffer c) { vkFreeCommandBuffers(dev, pool, 1, &c); });
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;  // the first wait on a slot returns at once
    VkFence fence = VK_NULL_HANDLE;
    vk::check(vkCreateFence(dev, &fi, nullptr, &fence), "vkCreateFence (window)");
    slot.fence = vk::Handle<VkFence>(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    vk::check(vkCreateSemaphore(dev, &si, nullptr, &semaphore), "vkCreateSemaphore (window)");
    slot.image_ready =
        vk::Handle<VkSemaphore>(semaphore, [dev](VkSemaphore s) { vkDestroySemaphore(dev, s, nullptr); });
  }

  StyleOptions style = options.style;
  if (options.large_type_on_small_screens && work_width > 0 && work_width <= kLargeTypeMaxWidth)
    style.font_size = std::max(style.font_size, kLargeTypeFontSize);
  renderer_ = std::make_unique<ImGuiRenderer>(*gpu_, render_pass_.get(), style);
  platform_ = std::make_unique<PlatformBackend>(window);
}

Window::~Window() {
  // The dashboard's own queue only; the trainer's device is never waited on. A device that hung is not waited for.
  if (gpu_ && gpu_->health() == vk::Device::Health::Ok) vkDeviceWaitIdle(gpu_->device());
}

bool Window::should_close() const { return glfwWindowShouldClose(window_.get()); }
void Window::request_close() { glfwSetWindowShouldClose(window_.get(), GLFW_TRUE); }
void Window::set_title(const std::string& title) { glfwSetWindowTitle(window_.get(), title.c_str()); }

int Window::width() const {
  int w = 0, h = 0;
  glfwGetWindowSize(window_.get(), &w, &h);
  return w;
}

int Window::height() const {
  int w = 0, h = 0;
  glfwGetWindowSize(window_.get(), &w, &h);
  return h;
}

void Window::set_size(int width, int height) {
  glfwSetWindowSize(window_.get(), std::max(width, 64), std::max(height, 64));
}

void Window::on_framebuffer_size(GLFWwindow* window, int, int) {
  on_input(window);
  static_cast<Window*>(glfwGetWindowUserPointer(window))->recreate_ = true;
}

void Window::on_input(GLFWwindow* window) {
  if (auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window))) self->input_ = true;
}

bool Window::wait_for_input(double seconds) {
  if (!input_ && seconds > 0) glfwWaitEventsTimeout(seconds);
  glfwPollEvents();
  return std::exchange(input_, false);
}

void Window::wake() { glfwPostEmptyEvent(); }

void Window::recreate_swapchain() {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_.get(), &w, &h);
  // Waits for the dashboard's own device only, and only on a resize: the old images may still be in use.
  vk::check(vkDeviceWaitIdle(gpu_->device()), "vkDeviceWaitIdle (dashboard resize)");
  collect_screenshot();
  VkSwapchainKHR old = swapchain_ ? swapchain_->handle() : VK_NULL_HANDLE;
  auto next = std::make_unique<Swapchain>(*gpu_, surface_.get(), surface_format_, render_pass_.get(),
                                          VkExtent2D{uint32_t(std::max(w, 1)), uint32_t(std::max(h, 1))}, vsync_, old);
  swapchain_ = std::move(next);
  recreate_ = false;
}

bool Window::screenshot_supported() const { return swapchain_ && swapchain_->readable(); }

bool Window::request_screenshot() {
  if (!screenshot_supported() || capture_pending_) return false;
  capture_requested_ = true;
  return true;
}

void Window::collect_screenshot() {
  if (!capture_pending_) return;
  VkFence fence = slots_[capture_slot_].fence.get();
  if (vkGetFenceStatus(gpu_->device(), fence) != VK_SUCCESS) return;  // still in flight: try next frame
  Image image;
  image.width = static_cast<int>(capture_extent_.width);
  image.height = static_cast<int>(capture_extent_.height);
  image.rgba.resize(size_t(image.width) * size_t(image.height) * 4);
  std::memcpy(image.rgba.data(), readback_.mapped(), image.rgba.size());
  for (size_t i = 0; i < image.rgba.size(); i += 4) {
    if (capture_bgra_) std::swap(image.rgba[i], image.rgba[i + 2]);
    image.rgba[i + 3] = 255;
  }
  capture_result_ = std::move(image);
  capture_pending_ = false;
}

std::optional<Image> Window::take_screenshot_result() {
  collect_screenshot();
  return std::exchange(capture_result_, std::nullopt);
}

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

void Window::frame(const DrawFn& draw) {
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
    return;
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

  // Build the frame on the CPU first: nothing Vulkan is pending if draw() misbehaves.
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

  const uint32_t slot_index = static_cast<uint32_t>(frame_index_ % kFramesInFlight);
  FrameSlot& slot = slots_[slot_index];
  VkDevice dev = gpu_->device();
  VkFence fence = slot.fence.get();
  // This slot's previous frame (kFramesInFlight frames ago) must be done before its command buffer is re-recorded.
  // Bounded: a hung GPU ends the dashboard with a message (vk::Error Timeout) instead of freezing the window.
  gpu_->wait(fence, kGpuTimeoutS, "drawing a frame of the window");
  collect_screenshot();  // a capture in this slot is complete now; read it before the slot is reused

  uint32_t image = 0;
  VkResult r = vkAcquireNextImageKHR(dev, swapchain_->handle(), static_cast<uint64_t>(kGpuTimeoutS * 1e9),
                                     slot.image_ready.get(), VK_NULL_HANDLE, &image);
  if (r == VK_TIMEOUT || r == VK_NOT_READY)
    throw vk::Error(vk::Failure::Timeout,
                    fmt::format("Vulkan: the display gave the window no image to draw into within {:.0f} s (a hung "
                                "GPU or driver)",
                                kGpuTimeoutS),
                    r);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {  // resized between the size check and now: skip this frame
    recreate_ = true;
    return;
  }
  if (r == VK_SUBOPTIMAL_KHR)
    recreate_ = true;  // still presentable: draw it, re-create next frame
  else
    vk::check(r, "vkAcquireNextImageKHR");

  if (capture) {
    capture_extent_ = swapchain_->extent();
    capture_bgra_ = swapchain_->bgra();
    const VkDeviceSize bytes = VkDeviceSize(capture_extent_.width) * capture_extent_.height * 4;
    if (readback_.size() != bytes) readback_ = vk::HostReadBuffer(*gpu_, bytes);  // idle: no capture in flight
  }
  vk::check(vkResetFences(dev, 1, &fence), "vkResetFences (window)");
  record(slot, image, capture);

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
  vk::check(vkQueueSubmit(gpu_->queue(), 1, &si, fence), "vkQueueSubmit (window)");
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
  r = vkQueuePresentKHR(gpu_->queue(), &pi);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
    recreate_ = true;
  else
    vk::check(r, "vkQueuePresentKHR");
  present_timer_.add(ms_since(submit_start));
  ++frame_index_;
}

}  // namespace ui
