// Memory bandwidth: achieved GB/s of each kernel, per backend, against the device's peak, measured at start-up with
// a large buffer copy (the roofline's memory ceiling; never a datasheet figure).
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct MemoryBandwidth {
  void draw(const DashboardView& view);
};

}  // namespace ui
