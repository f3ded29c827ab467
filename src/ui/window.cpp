// The dashboard window: GLFW set-up, its size and input, swapchain re-creation, and screenshots copied out of the
// presented image. (The frame loop: window_frame.cpp.)
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

GlfwLibrary::GlfwLibrary() {
  platform::pin_xinput_library();
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) fail("glfwInit failed");
  report_lost_display();
}

GlfwLibrary::~GlfwLibrary() { glfwTerminate(); }

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

}  // namespace ui
