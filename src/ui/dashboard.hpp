// ui::Dashboard: the whole window, laid out for a projector first (ui/layout.hpp): the race header on top with a fixed
// height, in a lesson a band with its caption in large type under it (and the teacher's quiet "3/9 · Space: next"),
// the loss curves on the left (at least half the width), the other views as tabs on the right (kTabs; titles that do
// not fit side by side are in a "More" menu; wide windows keep the Controls in a column of their own), a row of quick
// controls along the bottom. Each panel is a small struct with its
// own state and a draw(), as in Dear ImGui's examples; nothing draws outside its box (long texts are shortened with
// an ellipsis, ui/text_fit.hpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ui/dashboard_tabs.hpp"
#include "ui/layout.hpp"
#include "ui/panel_bandwidth.hpp"
#include "ui/panel_boundary.hpp"
#include "ui/panel_model.hpp"
#include "ui/panel_controls.hpp"
#include "ui/panel_kernels.hpp"
#include "ui/panel_loss.hpp"
#include "ui/panel_memory.hpp"
#include "ui/panel_race.hpp"
#include "ui/panel_roofline.hpp"
#include "ui/panel_sweep.hpp"
#include "ui/panel_timeline.hpp"
#include "ui/settings.hpp"

namespace ui {

// The screen rectangles of the last frame's parts (for the layout test and for overlays).
struct DrawnLayout {
  DashboardLayout layout;
  ImVec2 header_min, header_max;
  ImVec2 plots_min, plots_max;  // the plots' panel
  ImVec2 tabs_min, tabs_max;    // the tabbed views' panel
  ImVec2 bar_min, bar_max;      // the quick controls (empty without them)
  ImVec2 caption_min, caption_max;       // the caption band (empty without one)
  std::vector<std::string> caption_text;  // its lines as drawn
  float caption_text_width = 0;          // the room of a line of it (pixels), hint column excluded
  float caption_widest = 0;              // its widest line as drawn (pixels)
  std::string caption_hint;              // the teacher's hint as drawn
  std::vector<std::string> devices;      // the header's device names as drawn, left to right
};

// The summary slide's table (lesson_summary.cpp), drawn in the body's place while view.summary_shown.
void draw_lesson_summary(const DashboardView& view);

class Dashboard {
 public:
  // Draws one frame of the dashboard filling the display. controller: null for a finished run (controls disabled).
  // toast: a short message shown in the quick bar (e.g. where the last screenshot went), "" for none.
  void draw(const DashboardView& view, Controller* controller, const std::string& toast = "");

  // The one-line footer burnt into screenshots: devices, model, batch size, precision, date.
  static std::string footer(const DashboardView& view);

  // The view shown beside the plots and the plot mode, from and to the remembered settings.
  void load(const Settings& settings);
  void save(Settings& settings) const;

  // Shows `tab` from the next frame on (the user's click does the same).
  void show(Tab tab) { requested_tab_ = tab; }
  Tab tab() const { return tab_; }
  const DrawnLayout& drawn() const { return drawn_; }

  RaceHeader race;
  LossCurves loss;
  KernelTimings kernels;
  MemoryPanel memory;
  MemoryBandwidth bandwidth;
  RooflinePanel roofline;
  TimelinePanel timeline;
  Controls controls;
  SweepPanel sweep;
  BoundaryPanel boundary;
  ModelPanel model;

 private:
  void draw_tabs(const DashboardView& view, Controller* controller, bool with_controls);
  void draw_tab(Tab tab, const DashboardView& view, Controller* controller);
  void draw_caption_band(const DashboardView& view, const DashboardLayout& layout, float text_width);

  Tab tab_ = Tab::Controls;
  std::optional<Tab> requested_tab_;
  DrawnLayout drawn_;
};

}  // namespace ui
