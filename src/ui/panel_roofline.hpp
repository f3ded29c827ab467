// The Roofline tab: a log-log chart of arithmetic intensity (FLOP per compulsory byte) against achieved GFLOP/s, with
// each backend's memory and compute ceilings from its measured peaks (view.roof) and one dot per kernel per backend
// from the kernel table of the settings in force (so the dots move when the batch size or precision changes).
// Hovering a dot gives the kernel's figures, the ceiling that binds it and its % of that roof (core/roofline.hpp).
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct RooflinePanel {
  // controller: null for a finished run's picture (no re-measure button).
  void draw(const DashboardView& view, Controller* controller);
};

}  // namespace ui
