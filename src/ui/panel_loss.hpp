// Loss curves: the training loss of every step for GPU and CPU on one plot, and the test accuracy per epoch; the
// x-axis switches between steps and training seconds (the seconds view is where the speedup is seen). Every
// change of a setting is a labelled vertical marker.
#pragma once
#include "ui/panel.hpp"
#include "ui/plot.hpp"

namespace ui {

struct LossCurves {
  enum class XAxis { Step, Seconds };
  XAxis x_axis = XAxis::Step;

  LossCurves();
  void draw(const DashboardView& view);

 private:
  Plot loss_plot_;
  Plot accuracy_plot_;
  std::vector<std::string> marker_labels_;  // kept alive for the PlotMarker pointers of one frame
};

}  // namespace ui
