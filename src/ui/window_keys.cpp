// The window's keys and full screen: GLFW's key and character callbacks queue the teacher's keys (ui::Key) as they
// arrive, F12 asks for a screenshot, F11 fills the monitor the window is on.
#include <GLFW/glfw3.h>

#include <algorithm>
#include <optional>

#include "ui/window.hpp"

namespace ui {

namespace {

// A key press as the teacher means it. Letters by the layout's character (glfwGetKeyName: Q is Q on an AZERTY
// keyboard too), not by their place; '?' comes as a character (Window::on_char), since its key differs by layout.
std::optional<Key> key_of(int key, int scancode, int mods) {
  switch (key) {
    case GLFW_KEY_SPACE: case GLFW_KEY_RIGHT: case GLFW_KEY_PAGE_DOWN: return Key::Next;
    case GLFW_KEY_LEFT: case GLFW_KEY_PAGE_UP: return Key::Back;
    case GLFW_KEY_F11: return Key::FullScreen;
    case GLFW_KEY_F1: return Key::Help;
    case GLFW_KEY_ESCAPE: return Key::Quit;
    default: break;
  }
  if (mods & (GLFW_MOD_CONTROL | GLFW_MOD_ALT | GLFW_MOD_SUPER)) return std::nullopt;  // another program's shortcut
  const char* name = glfwGetKeyName(key, scancode);
  if (!name || !name[0] || name[1]) return std::nullopt;
  switch (name[0]) {
    case 'b': case '.': return Key::Blank;
    case 'p': return Key::Pause;
    case 'q': return Key::Quit;
    default: return std::nullopt;
  }
}

}  // namespace

void Window::on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  on_input(window);
  auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window));
  if (!self) return;
  self->last_key_repeat_ = action == GLFW_REPEAT;
  if (action != GLFW_PRESS) return;
  if (key == GLFW_KEY_F12) self->request_screenshot();
  if (const std::optional<Key> k = key_of(key, scancode, mods)) self->keys_.push_back(*k);
}

void Window::on_char(GLFWwindow* window, unsigned int codepoint) {
  on_input(window);
  auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window));
  if (self && codepoint == '?' && !self->last_key_repeat_) self->keys_.push_back(Key::Help);
}

bool Window::full_screen() const { return glfwGetWindowMonitor(window_.get()) != nullptr; }

void Window::toggle_full_screen() {
  GLFWwindow* w = window_.get();
  if (full_screen()) {
    glfwSetWindowMonitor(w, nullptr, windowed_[0], windowed_[1], std::max(windowed_[2], 64),
                         std::max(windowed_[3], 64), GLFW_DONT_CARE);
    return;
  }
  glfwGetWindowPos(w, &windowed_[0], &windowed_[1]);
  glfwGetWindowSize(w, &windowed_[2], &windowed_[3]);
  // The monitor the window's centre is on (the primary one when it is on none): a projector is often the second.
  int count = 0;
  GLFWmonitor** monitors = glfwGetMonitors(&count);
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  const int cx = windowed_[0] + windowed_[2] / 2, cy = windowed_[1] + windowed_[3] / 2;
  for (int i = 0; i < count; ++i) {
    int mx = 0, my = 0;
    glfwGetMonitorPos(monitors[i], &mx, &my);
    const GLFWvidmode* mode = glfwGetVideoMode(monitors[i]);
    if (mode && cx >= mx && cx < mx + mode->width && cy >= my && cy < my + mode->height) monitor = monitors[i];
  }
  const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
  if (!mode) return;  // no monitor to fill (GLFW said why through its error callback)
  glfwSetWindowMonitor(w, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
}

}  // namespace ui
