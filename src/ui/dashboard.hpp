// ui::Dashboard: the whole window's layout: the race header on top, the loss curves on the left, kernel timings,
// memory (by category and precision), memory bandwidth and the controls on the right, a status line at the bottom. Each panel is a small struct with
// its own state and a draw(); the frame is the list of `if (show_x) x.draw(view)` below, as in Dear ImGui's examples.
#pragma once
#include <string>

#include "ui/panel_bandwidth.hpp"
#include "ui/panel_controls.hpp"
#include "ui/panel_kernels.hpp"
#include "ui/panel_loss.hpp"
#include "ui/panel_memory.hpp"
#include "ui/panel_race.hpp"
#include "ui/settings.hpp"

namespace ui {

class Dashboard {
 public:
  // Draws one frame of the dashboard filling the display. controller: null for a finished run (controls disabled).
  // toast: a short message shown in the status line (e.g. where the last screenshot went), "" for none.
  void draw(const DashboardView& view, Controller* controller, const std::string& toast = "");

  // The one-line footer burnt into screenshots: devices, model, batch size, precision, date.
  static std::string footer(const DashboardView& view);

  // Panel visibility and plot mode, from and to the remembered settings.
  void load(const Settings& settings);
  void save(Settings& settings) const;

  bool show_race = true, show_loss = true, show_kernels = true, show_memory = true, show_bandwidth = true,
       show_controls = true;
  RaceHeader race;
  LossCurves loss;
  KernelTimings kernels;
  MemoryPanel memory;
  MemoryBandwidth bandwidth;
  Controls controls;
};

}  // namespace ui
