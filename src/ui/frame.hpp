// What one dashboard frame is, for every renderer (the window and the offscreen renderer): the draw function the
// panels provide, the RGBA picture a frame reads back to, and the frame-time statistics of a run.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace ui {

// Issues the ImGui calls of one frame (the panels). Called between ImGui::NewFrame() and ImGui::Render(), on the
// thread that owns the renderer; it must not throw (an exception leaves ImGui's frame unfinished).
using DrawFn = std::function<void()>;

// An RGBA8 picture: rows top to bottom, 4 bytes per pixel, alpha 255 (frames are opaque).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4 bytes

  bool empty() const { return width <= 0 || height <= 0 || rgba.size() != size_t(width) * size_t(height) * 4; }
  // The pixel at (x, y) as 0xRRGGBBAA. Precondition: inside the image.
  uint32_t pixel(int x, int y) const {
    const uint8_t* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
  }
};

// Frame times of a run, milliseconds. A frame's time is the interval from the start of one rendered frame to the
// start of the next (what a viewer sees: with vsync on, close to the display's refresh interval).
struct FrameStats {
  double last_ms = 0;
  double mean_ms = 0;
  double p95_ms = 0;  // 95th percentile over the whole run, 0.1 ms resolution
  double max_ms = 0;
  int64_t frames = 0;  // frame intervals counted
};

// Accumulates frame intervals in a fixed histogram (0.1 ms bins up to 1 s), so a run of hours costs no memory.
class FrameTimer {
 public:
  FrameTimer();
  void add(double ms);
  FrameStats stats() const;

 private:
  static constexpr double kBinMs = 0.1;
  std::vector<int64_t> bins_;  // the last bin holds everything from 1 s up
  FrameStats stats_;
  double sum_ms_ = 0;
};

}  // namespace ui
