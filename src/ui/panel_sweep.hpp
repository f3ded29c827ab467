// The Sweep tab: the batch-size sweep run live from the dashboard (run::LiveSweep: training paused meanwhile, and
// resumed after unless it was paused before). The points appear as they are measured on a log-log plot of samples/s
// against the batch size, one line per backend, with the crossover marked and explained below; Save writes the
// results as `trainscope sweep --report` / `--csv` would (JSON and CSV beside the screenshots).
#pragma once
#include <atomic>
#include <memory>
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
  // Every frame, whichever tab is shown: starts a requested sweep, resumes training after one has ended.
  void update(const DashboardView& view, Controller* controller);
  void draw(const DashboardView& view, Controller* controller);
  void request_start() { start_requested_ = true; }  // at the next update() (a lesson's "do": "sweep")
  bool busy() const { return start_requested_ || sweep_.running(); }
  run::LiveSweepState state() const { return sweep_.state(); }

 private:
  void start(const DashboardView& view, Controller& controller);
  void save(const run::LiveSweepState& state);
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

  // Every backend of the training is paused (or stopped), as the last frame saw it; read by the sweep thread.
  std::shared_ptr<std::atomic<bool>> training_paused_ = std::make_shared<std::atomic<bool>>(false);
  std::string saved_;  // the last Save's message (where the files went, or why not)
  bool start_requested_ = false;
  run::LiveSweep sweep_;  // last: destroyed (its thread stopped and joined) before the members above
};

}  // namespace ui
