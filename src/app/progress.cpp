// Progress: stderr shows where each backend is; stdout gets the lasting lines (devices, epoch results).
#include "app/progress.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "app/print.hpp"
#include "app/summary.hpp"
#include "platform/system.hpp"

namespace app {
namespace {

// Plain mode (stderr is a file or a pipe): at most one progress line per backend this often.
constexpr std::chrono::seconds kPlainInterval{10};
// Terminal mode: redraws at most this often, so that printing never slows the training down.
constexpr std::chrono::milliseconds kRedrawInterval{100};

int terminal_columns() {
  const int columns = platform::stderr_terminal_columns();
  return columns > 0 ? columns : 80;
}

}  // namespace

Progress::Progress(const core::TrainConfig& cfg) : tty_(platform::stderr_is_terminal()), epochs_(cfg.epochs) {
  for (const auto& name : cfg.backends) {
    backends_.push_back(Backend{name});
    name_width_ = std::max(name_width_, name.size());
  }
}

Progress::Backend& Progress::backend(const std::string& name) {
  for (auto& b : backends_)
    if (b.name == name) return b;
  backends_.push_back(Backend{name});
  return backends_.back();
}

void Progress::clear_bar() {
  if (!bar_shown_) return;
  std::fputs("\r\033[K", stderr);
  flush(stderr);
  bar_shown_ = false;
}

// One line for all backends: "gpu 1/3 [#####.....]  52% loss 0.4210 | cpu ...", cut to the terminal's width.
void Progress::draw_bar() {
  std::string line;
  for (const auto& b : backends_) {
    if (!b.active || b.steps == 0) continue;
    const int width = 16;
    const int filled = b.step * width / b.steps;
    if (!line.empty()) line += " | ";
    line += fmt::format("{} {}/{} [{}{}] {:3d}% loss {:.4f}", b.name, b.epoch, epochs_, std::string(filled, '#'),
                        std::string(width - filled, '.'), b.step * 100 / b.steps, b.loss);
  }
  if (line.empty()) return;
  const size_t columns = static_cast<size_t>(terminal_columns());
  if (line.size() >= columns) line.resize(columns - 1);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  flush(stderr);
  bar_shown_ = true;
  last_draw_ = Clock::now();
}

void Progress::on_start(const std::string& name, const std::string& device) {
  std::lock_guard lock(mutex_);
  clear_bar();
  say("{:<{}}  device: {}\n", name, name_width_, device);
  flush(stdout);
  backend(name).active = true;
}

void Progress::on_steps(const std::string& name, std::span<const core::StepRecord> records, int epoch,
                        int step_in_epoch, int steps_per_epoch) {
  std::lock_guard lock(mutex_);
  Backend& b = backend(name);
  b.epoch = epoch;
  b.step = step_in_epoch;
  b.steps = steps_per_epoch;
  if (!records.empty()) b.loss = records.back().loss;
  const Clock::time_point now = Clock::now();
  if (tty_) {
    if (now - last_draw_ >= kRedrawInterval) draw_bar();
  } else if (now - b.last_line >= kPlainInterval) {
    b.last_line = now;
    std::fprintf(stderr, "%s: epoch %d/%d, step %d/%d, loss %.4f\n", name.c_str(), epoch, epochs_, step_in_epoch,
                 steps_per_epoch, static_cast<double>(b.loss));
  }
}

void Progress::on_epoch(const std::string& name, const core::EpochRecord& e) {
  std::lock_guard lock(mutex_);
  clear_bar();
  say("{:<{}}  epoch {}/{}  train loss {:.4f}  test loss {:.4f}  test accuracy {:5.2f}%  {:>11} samples/s  "
      "({})\n",
      name, name_width_, e.epoch, epochs_, e.train_loss, e.test_loss, 100 * e.test_accuracy,
      group_thousands(e.samples_per_s), format_seconds(e.seconds));
  flush(stdout);
  if (e.epoch >= epochs_) backend(name).active = false;
  if (tty_) draw_bar();
}

void Progress::on_error(const std::string& name, const std::string& message) {
  std::lock_guard lock(mutex_);
  clear_bar();
  std::fprintf(stderr, "trainscope: %s backend stopped: %s\n", name.c_str(), message.c_str());
  flush(stderr);
  backend(name).active = false;
  if (tty_) draw_bar();
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  clear_bar();
}

}  // namespace app
