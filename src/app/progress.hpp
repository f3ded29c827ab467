// The terminal progress display of `trainscope train`: a live bar on stderr when it is a terminal, plain progress
// lines otherwise; one result line per epoch and backend on stdout.
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "run/session.hpp"

namespace app {

class Progress : public run::Observer {
 public:
  explicit Progress(const core::TrainConfig& cfg);

  void on_start(const std::string& backend, const std::string& device) override;
  void on_steps(const std::string& backend, std::span<const core::StepRecord> records, int epoch, int step_in_epoch,
                int steps_per_epoch) override;
  void on_epoch(const std::string& backend, const core::EpochRecord& epoch) override;
  void on_error(const std::string& backend, const std::string& message) override;

  // Clears the bar; call once the session is over, before printing anything else.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  struct Backend {
    std::string name;
    int epoch = 0, step = 0, steps = 0;
    float loss = 0;
    bool active = false;
    Clock::time_point last_line{};  // plain mode: when the last progress line was printed
  };
  Backend& backend(const std::string& name);
  void clear_bar();
  void draw_bar();

  std::mutex mutex_;
  const bool tty_;
  const int epochs_;
  size_t name_width_ = 3;
  std::vector<Backend> backends_;
  bool bar_shown_ = false;
  Clock::time_point last_draw_{};
};

}  // namespace app
