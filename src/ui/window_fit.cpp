// A window that fits its screen: the first size shrunk to the monitor's work area (the screen less its taskbars and
// docks) and the window's frame, so that a remembered 1600x900 or a lesson's 1280x720 never opens beyond a 1280x720
// or 1024x768 screen with its quick bar and tabs cut off.
#include <GLFW/glfw3.h>

#include <algorithm>

#include "ui/window.hpp"

namespace ui {

WindowFit fit_window(int width, int height, const int work_area[4], const int frame[4]) {
  WindowFit fit{width, height, 0, 0, false};
  const int room_w = work_area[2] - frame[0] - frame[2], room_h = work_area[3] - frame[1] - frame[3];
  if (room_w <= 0 || room_h <= 0) return fit;  // no work area known: as asked
  fit.width = std::max(64, std::min(width, room_w));
  fit.height = std::max(64, std::min(height, room_h));
  fit.shrunk = fit.width != width || fit.height != height;
  fit.x = work_area[0] + frame[0];
  fit.y = work_area[1] + frame[1];
  return fit;
}

int Window::fit_to_work_area(bool shrink) {
  GLFWwindow* w = window_.get();
  // The monitor it opens on: the primary one (GLFW places a new window there).
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  if (!monitor) return 0;
  int area[4] = {0, 0, 0, 0}, frame[4] = {0, 0, 0, 0};
  glfwGetMonitorWorkarea(monitor, &area[0], &area[1], &area[2], &area[3]);
  glfwGetWindowFrameSize(w, &frame[0], &frame[1], &frame[2], &frame[3]);
  int width = 0, height = 0;
  glfwGetWindowSize(w, &width, &height);
  const WindowFit fit = fit_window(width, height, area, frame);
  if (shrink && fit.shrunk) {  // else where the window manager puts it
    glfwSetWindowSize(w, fit.width, fit.height);
    glfwSetWindowPos(w, fit.x, fit.y);
  }
  return area[2];
}

}  // namespace ui
