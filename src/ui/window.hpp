// ui::Window: the dashboard's window: GLFW, a Vulkan surface and swapchain on the dashboard's own VkDevice (never
// the trainer's), ImGui's GLFW and Vulkan backends, and a frame loop with kFramesInFlight frames in flight, each
// with its own command buffer and fence. F12 (or request_screenshot()) reads a frame back for a PNG.
//
//   ui::Window window({.title = "trainscope", .device_index = device});
//   while (!window.should_close()) {
//     window.frame([&] { if (show_loss) loss.draw(snapshot); ... });
//     if (auto shot = window.take_screenshot_result()) status = ui::save_screenshot(*shot).error;
//   }
//
// One Window or OffscreenRenderer per process at a time (see ui/imgui_renderer.hpp); all calls on one thread.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ui/frame.hpp"
#include "ui/imgui_renderer.hpp"
#include "ui/presenter_keys.hpp"
#include "ui/style.hpp"
#include "ui/swapchain.hpp"
#include "vk/graphics_context.hpp"
#include "vk/handle.hpp"

struct GLFWwindow;

namespace ui {

struct WindowOptions {
  std::string title = "trainscope";
  int width = 1600;  // screen coordinates
  int height = 900;
  int device_index = -1;    // the trainer's --device; -1: the best device
  bool vsync = true;        // FIFO presentation; off: MAILBOX/IMMEDIATE where the surface has them
  bool validation = false;  // VK_LAYER_KHRONOS_validation on the dashboard's device
  // Frame-rate cap, frames/s (0: none, vsync or the device sets the pace). On a software device (lavapipe) every
  // frame is rasterized by the CPU the CPU trainer runs on: 1600x900 with four full panels measured 28 ms/frame on
  // 2 cores, so a cap of 15-30 leaves the trainer its cores. Events are still handled while waiting.
  double max_fps = 0;
  StyleOptions style;
  // Shrink width x height to the work area of the monitor the window opens on (its size less the taskbars and, once
  // known, the window's own frame), so that a remembered or a lesson's size never opens beyond the screen. False for
  // a size the user gave (--size).
  bool fit_work_area = true;
  // Large type on a small screen: where the work area is at most kLargeTypeMaxWidth wide (a projector's 1024x768,
  // 1280x720, a 1366x768 laptop), `style` gets at least kLargeTypeFontSize. For a first start (no remembered
  // settings) without a font size given.
  bool large_type_on_small_screens = false;
};

inline constexpr int kLargeTypeMaxWidth = 1366;    // screen coordinates
inline constexpr float kLargeTypeFontSize = 24.0f;  // pixels

// Where a window of width x height (screen coordinates, its frame excluded) goes in a monitor's work area (x, y,
// width, height) given its frame's margins (left, top, right, bottom; 0 without a window manager): the size shrunk
// to fit (`shrunk`), and the position of its top-left corner that puts its frame at the work area's top-left corner.
struct WindowFit {
  int width = 0, height = 0;
  int x = 0, y = 0;
  bool shrunk = false;
};
WindowFit fit_window(int width, int height, const int work_area[4], const int frame[4]);

// GLFW started (glfwInit) for the object's lifetime, then ended (glfwTerminate); each Window holds one. Throws
// core::Error(Vulkan) when GLFW cannot start (no display). On Windows it first pins the XInput DLL that GLFW loads
// and frees (platform::pin_xinput_library: freeing it crashed under wine).
class GlfwLibrary {
 public:
  GlfwLibrary();
  ~GlfwLibrary();
  GlfwLibrary(const GlfwLibrary&) = delete;
  GlfwLibrary& operator=(const GlfwLibrary&) = delete;
};

class Window {
 public:
  // Throws core::Error(Vulkan) when no window can be opened (no display: use ui::OffscreenRenderer), when there is
  // no Vulkan device that can present to it; core::Error(Internal) when an ImGui context already exists.
  explicit Window(const WindowOptions& options);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  void request_close();
  void set_title(const std::string& title);
  // Window size in screen coordinates (ui::Settings remembers it); set_size asks the window system for a new one.
  int width() const;
  int height() const;
  void set_size(int width, int height);
  // F11: full screen on the monitor the window is on, or back to the window it was.
  void toggle_full_screen();
  bool full_screen() const;

  // The teacher's keys pressed since the last call, in the order pressed (ui::Key; key repeats are not presses).
  // Queued by GLFW's callbacks as the events arrive, so a press and release inside one slow frame still count: ImGui
  // 1.86's polled key state (ImGui::IsKeyPressed) sees only the state at each frame. ImGui still gets every key
  // (its GLFW backend chains to these callbacks): the caller skips the keys while a text field has the keyboard.
  std::vector<Key> take_keys() { return std::exchange(keys_, {}); }

  // One frame: waits for the max_fps cap (handling events meanwhile), polls events; while minimized waits up to 100 ms
  // for events and returns without drawing; re-creates the swapchain after a resize or when it is out of
  // date/suboptimal; runs draw() between ImGui::NewFrame() and ImGui::Render(); waits for this frame slot's own fence
  // (kFramesInFlight frames ago), acquires, records, submits, presents. Throws core::Error(Vulkan) when a Vulkan call
  // fails (device lost, out of memory).
  void frame(const DrawFn& draw);

  // Rendering on demand: waits up to `seconds` for the user (keys, mouse, scroll, text, a resize or an expose), or
  // until wake() is called from another thread; returns whether any input arrived since the last call (including
  // during the last frame()). Events are handled while waiting.
  bool wait_for_input(double seconds);
  // Ends a wait_for_input() from any thread.
  static void wake();

  // Reads the next frame back (the F12 key does the same). False when the surface's images cannot be read back or
  // a screenshot is still in flight. The frame is drawn with the footer of set_footer().
  bool request_screenshot();
  bool screenshot_supported() const;
  // The captured frame (RGBA, swapchain size) once its fence has signalled, usually 1-2 frames after the request;
  // never waits. Hand it to ui::save_screenshot().
  std::optional<Image> take_screenshot_result();
  // Footer burnt into captured frames (ui::footer_text()); "" for none.
  void set_footer(std::string text) { footer_ = std::move(text); }

  // New fonts/style, applied at the start of the next frame (safe to call from inside a DrawFn).
  void set_style(const StyleOptions& style) { pending_style_ = style; }
  const StyleOptions& style() const { return renderer_->style(); }

  FrameStats frame_stats() const { return timer_.stats(); }
  // Where a frame's time goes, milliseconds per frame: building the UI on the CPU (ImGui::NewFrame to Render), and
  // vkQueueSubmit through vkQueuePresentKHR's return. On a software device the second holds the rasterization and,
  // where the display has no shared memory (Xvfb: no DRI3, so Mesa's software WSI sends every image through the X
  // socket), the copy of the whole image to the X server.
  FrameStats build_stats() const { return build_timer_.stats(); }
  FrameStats present_stats() const { return present_timer_.stats(); }
  double frame_ms() const { return timer_.stats().last_ms; }
  VkPresentModeKHR present_mode() const { return swapchain_->present_mode(); }
  const vk::GraphicsContext& gpu() const { return *gpu_; }

 private:
  struct PlatformBackend {  // ImGui_ImplGlfw_InitForVulkan / Shutdown
    explicit PlatformBackend(GLFWwindow* window);
    ~PlatformBackend();
    PlatformBackend(const PlatformBackend&) = delete;
    PlatformBackend& operator=(const PlatformBackend&) = delete;
  };
  struct FrameSlot {
    vk::Handle<VkCommandBuffer> cmd;
    vk::Handle<VkFence> fence;            // signalled when the GPU is done with this slot's frame
    vk::Handle<VkSemaphore> image_ready;  // acquire -> submit
  };

  static void on_key(GLFWwindow* window, int key, int scancode, int action, int mods);
  static void on_char(GLFWwindow* window, unsigned int codepoint);
  static void on_framebuffer_size(GLFWwindow* window, int width, int height);
  static void on_input(GLFWwindow* window);  // any other input: the next wait_for_input() returns true
  // The work area's width (0: unknown); shrinks the window to the work area when `shrink`. Before it is shown.
  int fit_to_work_area(bool shrink);
  void recreate_swapchain();
  void record(FrameSlot& slot, uint32_t image, bool capture);
  // The parts of frame() (window_frame.cpp).
  bool begin_frame();
  bool build_frame(const DrawFn& draw);
  std::optional<uint32_t> acquire_image(FrameSlot& slot);
  void submit_and_present(uint32_t slot_index, uint32_t image, bool capture);
  void collect_screenshot();

  GlfwLibrary glfw_;
  vk::Handle<GLFWwindow*> window_;
  std::unique_ptr<vk::GraphicsContext> gpu_;
  vk::Handle<VkSurfaceKHR> surface_;
  VkSurfaceFormatKHR surface_format_{};
  vk::Handle<VkRenderPass> render_pass_;
  std::unique_ptr<Swapchain> swapchain_;
  std::array<FrameSlot, kFramesInFlight> slots_;
  vk::HostReadBuffer readback_;
  std::unique_ptr<ImGuiRenderer> renderer_;    // after the Vulkan objects: shut down before them
  std::unique_ptr<PlatformBackend> platform_;  // after renderer_: shut down before the ImGui context goes

  bool vsync_ = true;
  double max_fps_ = 0;
  bool input_ = false;  // input arrived since the last wait_for_input()
  std::vector<Key> keys_;         // presses not yet taken (take_keys)
  bool last_key_repeat_ = false;  // the last key event was a repeat: its character is not a press either
  int windowed_[4] = {0, 0, 0, 0};  // x, y, width, height before full screen
  bool recreate_ = false;
  uint64_t frame_index_ = 0;
  std::optional<StyleOptions> pending_style_;
  std::string footer_;
  bool capture_requested_ = false;
  bool capture_pending_ = false;  // a copy is in flight in slot capture_slot_
  uint32_t capture_slot_ = 0;
  VkExtent2D capture_extent_{};
  bool capture_bgra_ = false;
  std::optional<Image> capture_result_;
  FrameTimer timer_;
  FrameTimer build_timer_;
  FrameTimer present_timer_;
  std::optional<std::chrono::steady_clock::time_point> last_frame_start_;
};

}  // namespace ui
