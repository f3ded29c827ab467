// Controls: batch size, learning rate, optimizer, CPU threads, pause / resume / single step / reset, dataset and
// hidden layer sizes (which reset training, after a confirmation), precision, and the font size for the room.
// Every change goes to the Controller and is applied by the trainers between steps.
#pragma once
#include <string>

#include "ui/panel.hpp"

namespace ui {

struct Controls {
  void draw(const DashboardView& view, Controller* controller);

 private:
  void sync_from(const core::TrainConfig& cfg);
  void draw_training(const DashboardView& view, Controller& c);
  void draw_precision(const DashboardView& view, Controller& c, float width);
  void draw_model(const DashboardView& view, Controller& c);
  void draw_display(Controller& c);

  bool synced_ = false;
  int batch_ = 128;
  float lr_ = 1e-3f;
  int optimizer_ = 1;  // 0 sgd, 1 adamw
  int threads_ = 0;
  int dataset_ = 0;    // 0 fashion-mnist, 1 spiral
  char hidden_[64] = "256,128";
  int activation_ = 0;
  float font_size_ = 0;  // the slider's value while dragging
  std::string model_error_;
  core::TrainConfig pending_;  // the model change awaiting confirmation
};

}  // namespace ui
