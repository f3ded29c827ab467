// The race header: per backend samples/s, steps, epoch, elapsed time, loss, test accuracy and the precision in force
// (fp16: with its loss scale and skipped steps); the speedup (GPU ÷ CPU samples/s) in large type; the time each side
// needed to reach a target loss.
#pragma once
#include "ui/panel.hpp"

namespace ui {

struct RaceHeader {
  float target_loss = 0.5f;  // "time to reach loss L"; the user can change it

  void draw(const DashboardView& view);

 private:
  void draw_backend(const core::BackendRun& run);
};

}  // namespace ui
