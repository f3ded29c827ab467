// The Boundary tab (2-D data: the spiral): per backend, the class its current weights predict over the plane as a
// heat map, with the training points on top, refreshed by each backend's worker a few times a second
// (BackendRun::boundary: computed by the trainer on its own device in one batch, never by the UI thread).
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct BoundaryPanel {
  void draw(const DashboardView& view);
};

}  // namespace ui
