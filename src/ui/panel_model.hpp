// The Model tab, "what the model sees": 16 test images with the class the current weights predict (green when it is
// the true class, red with the true class under it when not), and for a CNN its first convolution's filters drawn
// as small images, refreshed live from each backend's snapshot (BackendRun::model_view, made by the run layer's
// worker with the trainer's own predict(); the UI never touches a trainer). One backend at a time: GPU or CPU.
#pragma once
#include <string>
#include <vector>

#include "ui/panel.hpp"

namespace ui {

class ModelPanel {
 public:
  void draw(const DashboardView& view);

  // What the last draw() showed, for the tests: the backend, per image the predicted and the true class's names as
  // drawn, and the number of filters drawn.
  struct Drawn {
    std::string backend;
    std::vector<std::string> predicted, truth;
    int filters = 0;
    long step = 0;
  };
  const Drawn& drawn() const { return drawn_; }

 private:
  std::string backend_ = "gpu";  // whose view is shown (the other's when it has none)
  Drawn drawn_;
  // The backend buttons (a click chooses backend_) and the line that says what the images show.
  void draw_caption(const DashboardView& view, const core::BackendRun& shown);
};

}  // namespace ui
