// Controls: pause / resume / single step / reset; batch size, learning rate, optimizer, precision, CPU threads; per
// backend what it runs now and what is pending; dataset, hidden layer sizes and activation (which reset training,
// after a confirmation); the fair mode (the backends take turns); font size and presentation mode. Every widget shows the settings of DashboardView::config
// (the session's settings: what a Reset restarts with), never a copy of its own, so what the controls show is what
// runs once the backends have applied it. Every change goes to the Controller; the backends apply it at their next
// step boundary. The quick bar is the most used of them in one row along the bottom of the window.
#pragma once
#include <string>

#include "ui/panel.hpp"

namespace ui {

struct Controls {
  void draw(const DashboardView& view, Controller* controller);
  // Whether the quick bar is on screen (its Pause / Single step / Reset are then left out of the panel).
  void set_quick_bar_shown(bool shown) { quick_bar_shown_ = shown; }
  // One row: Pause/Resume, Reset, the batch presets, the precision, a status text (the toast, else what is being
  // applied or was refused), Screenshot. Items that do not fit are left out (the Controls tab has them all).
  void draw_quick_bar(const DashboardView& view, Controller* controller, const std::string& toast);

 private:
  void draw_run_buttons(const DashboardView& view, Controller& c);
  void draw_training(const DashboardView& view, Controller& c);
  void draw_toggles(const DashboardView& view, Controller& c, float width);  // the teaching toggles' combo
  static std::string toggles_preview(const DashboardView& view);           // its text when closed
  static float toggles_preview_width(const DashboardView& view);           // its width showing that text whole
  void draw_input(const DashboardView& view, Controller& c);  // its input pipeline part
  void draw_threads(const DashboardView& view, Controller& c, float width);  // CPU threads, take turns
  void draw_precision_combo(const DashboardView& view, Controller& c, float width);
  void draw_backends(const DashboardView& view);
  void draw_model(const DashboardView& view, Controller& c);
  void draw_transformer_sizes(float w);
  void draw_display(Controller& c);

  // The model being edited (applied with a reset), synced from the settings whenever their model changes.
  void sync_model(const core::TrainConfig& cfg);
  std::string synced_model_;  // the settings' model as text, when last synced
  int dataset_ = 0;           // the dataset's place in its row's spellings: fashion-mnist, spiral, reverse, fortunes
  int model_ = 0;             // 0 mlp, 1 cnn, 2 transformer
  char conv_[64] = "32,64";   // a CNN's convolutions' channels
  char hidden_[64] = "256,128";
  int layers_ = 2, embed_ = 64, heads_ = 4;  // a transformer's blocks, width and heads
  int activation_ = 0;
  bool quick_bar_shown_ = false;
  float font_size_ = 0;  // the slider's value while dragging
  int threads_ = 0;      // the slider's value while dragging
  std::string model_error_;
  std::string setting_error_;  // a batch size or learning rate typed out of range, with what is allowed
  core::TrainConfig pending_;  // the model change awaiting confirmation
};

// A Controller that does nothing, for drawing the controls of a finished run (disabled).
Controller& null_controller();

}  // namespace ui
