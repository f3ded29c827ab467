// The Sweep tab: the batch-size sweep run live from the dashboard (app::DashboardSweep, the controller's: training
// paused meanwhile, and resumed after unless it was paused before; this tab draws its state and posts its buttons). The points appear as they are measured on a log-log plot of samples/s
// against the batch size, one line per backend, with the crossover marked and explained below; Save writes the
// results as `trainscope sweep --report` / `--csv` would (JSON and CSV beside the screenshots).
#pragma once
#include <string>
#include <vector>

#include "run/live_sweep.hpp"
#include "ui/panel.hpp"

namespace ui {

// The step, in powers of two, between the labelled batch sizes of the sweep's x axis (2: 1, 4, 16, ...; 3: 1, 8, 64,
// ...; 4: 1, 16, 256, 4096): the smallest of 2, 3, 4, 6 and 12 at which labels at most `widest` pixels wide, centred on
// their ticks across a data area `span` pixels wide for batch 2^0..2^12, keep `gap` pixels between them (so that
// "1024" and "4096" never run together).
int batch_label_stride(float span, float widest, float gap);

class SweepPanel {
 public:
  // The sweep the view carries (DashboardView::sweep); its buttons post to `controller` (none: disabled).
  void draw(const DashboardView& view, Controller* controller);

 private:
  void draw_plot(const run::SweepResult& result, float height);

 public:
  // What the last draw() drew, for the layout tests: the tab's height, the data area's and the x labels' boxes.
  struct Drawn {
    float panel_height = 0;
    ImVec2 data_min, data_max;
    std::vector<ImVec4> x_labels;  // (min x, min y, max x, max y) each
    std::vector<std::string> word_lines;  // the words under the plot, as drawn (whole words)
  };
  const Drawn& drawn() const { return drawn_; }

 private:
  Drawn drawn_;
};

}  // namespace ui
