// The Roofline tab: a log-log chart of arithmetic intensity (FLOP per compulsory byte) against achieved GFLOP/s, with
// each backend's memory and compute ceilings from its measured peaks (view.roof) and one dot per kernel per backend
// from the kernel table of the settings in force (so the dots move when the batch size or precision changes).
// Hovering a dot gives the kernel's figures, the ceiling that binds it and its % of that roof (core/roofline.hpp).
// Every dot carries its kernel's number (one per kernel, both backends' dots alike); each number is explained by the
// kernel's name beside one of its dots where it fits ("3 matmul_forward"), else in the key under the chart.
#pragma once
#include <string>
#include <vector>

#include "ui/panel.hpp"

namespace ui {

struct RooflinePanel {
  // controller: null for a finished run's picture (no re-measure button).
  void draw(const DashboardView& view, Controller* controller);

  // What the last draw() showed, for the tests: each drawn dot's kernel and number, the names written in the chart
  // ("3 matmul_forward") and the key's entries.
  struct Drawn {
    std::vector<std::pair<std::string, int>> dots;  // (kernel, number)
    std::vector<std::string> in_chart;
    std::vector<std::string> key;
  };
  const Drawn& drawn() const { return drawn_; }

 private:
  Drawn drawn_;
};

}  // namespace ui
