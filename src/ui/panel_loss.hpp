// Loss curves: the training loss of every step for GPU and CPU on one plot, and the test accuracy per epoch; the
// x-axis switches between steps and training seconds (the seconds view is where the speedup is seen). Every change of
// a setting is a labelled vertical marker. The loss plot's canvas gets at least the height the layout asks for; the
// accuracy plot and the time each side needed to reach a target loss are shown below it when there is room, else
// the panel switches between the loss and the accuracy plot.
#pragma once
#include "ui/panel.hpp"
#include "ui/plot.hpp"

namespace ui {

struct LossCurves {
  enum class XAxis { Step, Seconds };
  XAxis x_axis = XAxis::Step;
  float target_loss = 0.5f;   // "time to reach loss L"; the user can change it
  bool show_accuracy = false;  // when only one plot fits: the accuracy instead of the loss (the plot selector)

  LossCurves();
  // min_loss_canvas: pixels the loss plot's canvas must keep (ui::DashboardLayout::min_loss_canvas).
  void draw(const DashboardView& view, float min_loss_canvas = 0);

  const Plot& loss_plot() const { return loss_plot_; }
  bool accuracy_shown() const { return accuracy_shown_; }  // as of the last draw()
  // The plot at the top of the panel in the last draw(): the loss plot, or the accuracy plot when it replaced it.
  const Plot& top_plot() const { return loss_drawn_ ? loss_plot_ : accuracy_plot_; }

 private:
  // One frame's curves: per backend its loss and accuracy series, and the markers of its changes (their labels in
  // marker_labels_).
  struct Curves {
    std::vector<PlotSeries> losses, accuracies;
    std::vector<PlotMarker> markers;
  };
  void draw_time_to_loss(const DashboardView& view);
  void fit_to_slower_side(const DashboardView& view, bool by_step);
  Curves curves(const DashboardView& view, bool by_step);
  // The plots' header selector; by_step: the x-axis this frame started with.
  void draw_plot_selector(bool by_step, bool both, float width);

  Plot loss_plot_;
  Plot accuracy_plot_;
  bool accuracy_shown_ = false;
  bool loss_drawn_ = true;
  std::vector<std::string> marker_labels_;  // kept alive for the PlotMarker pointers of one frame
};

}  // namespace ui
