// Memory bandwidth: achieved GB/s of each kernel, per backend, against the device's measured memory ceiling (the
// peaks cache, run::SessionPeaks; never a datasheet figure), with the button that measures the peaks again.
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct MemoryBandwidth {
  // controller: null for a finished run's picture.
  void draw(const DashboardView& view, Controller* controller);
};

}  // namespace ui
