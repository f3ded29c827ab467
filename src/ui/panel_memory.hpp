// The memory panel: where each backend's bytes go in the precision in force, next to the same model in fp32, as
// stacked bars on one scale (weights, master weights, gradients, optimizer state, activations, workspace). The dataset
// copy is stated in one line instead: 210 MiB of Fashion-MNIST on the GPU would dwarf the model.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ui/panel.hpp"

namespace ui {

// One segment of a memory bar: a core::MemoryUsage category.
struct MemorySegment {
  const char* label = "";  // "weights", "master weights", "gradients", "optimizer state", "activations", "workspace"
  size_t bytes = 0;
  ImU32 color = 0;  // one colour per category, the same in every bar and in the legend
};

// The bar of `m`: its six categories in drawing order, zeros included (every bar has the same segments in the same
// order). The dataset is left out: the bytes sum to m.total() - m.dataset. A pure function.
std::vector<MemorySegment> memory_segments(const core::MemoryUsage& m);

// Horizontal pixel extent [x0, x1) of one drawn segment.
struct SegmentSpan {
  float x0 = 0, x1 = 0;
};

// Where `segments` are drawn as a bar starting at `x0` on a scale where `scale_bytes` fills `width` pixels:
// contiguous spans, one per segment (empty for a zero segment), the last ending at x0 + width * sum / scale_bytes.
// scale_bytes 0 gives empty spans at x0. A pure function.
std::vector<SegmentSpan> segment_spans(const std::vector<MemorySegment>& segments, size_t scale_bytes, float x0,
                                       float width);

// "512 B", "118.5 KiB", "3.25 MiB", "1.20 GiB" (binary units: 1 KiB = 1024 bytes).
std::string format_bytes(size_t bytes);

struct MemoryPanel {
  void draw(const DashboardView& view);

 private:
  // One bar of `m` on a scale where `scale_bytes` spans `bar_width` pixels, then `total` after it. A hovered segment
  // shows its category and size.
  void draw_bar(const core::MemoryUsage& m, size_t scale_bytes, float bar_width, const std::string& total);
};

}  // namespace ui
