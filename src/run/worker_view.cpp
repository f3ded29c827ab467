// One backend's training loop, what the model sees (core/model_view.hpp): a few test images predicted by the trainer
// in use, with the parameters they were predicted with and a CNN's first filters, a few times a second. Like the
// decision boundary's map, its time is neither training time nor any step's overhead.
#include <algorithm>
#include <memory>

#include "core/metrics.hpp"
#include "core/model_view.hpp"
#include "run/worker.hpp"

namespace run {

void Worker::prepare_model_view() {
  view_base_.reset();
  last_view_s_ = 0;
  const std::vector<int> rows = core::model_view_rows(data_->test);
  if (!rows.empty()) view_base_ = std::make_shared<const core::ModelView>(core::make_model_view(data_->test, rows));
  std::lock_guard lock(run_mutex_);
  run_.model_view.reset();
}

void Worker::update_model_view(bool now) {
  if (!view_base_ || !trainer_) return;
  const double t = core::monotonic_seconds();
  // At most a tenth of the time: the next view waits at least 10 times what the last one took.
  if (!now && t - last_view_s_ < std::max(core::kModelViewSeconds, 10 * view_cost_s_)) return;
  clock_.stop();
  auto view = std::make_shared<core::ModelView>(*view_base_);
  // The predictions and the parameters read back together, between steps: the same weights.
  view->predicted = trainer_->predict(view->images, static_cast<size_t>(view->count()));
  auto params = std::make_shared<const std::vector<float>>(trainer_->parameters());
  core::set_filters(*view, trainer_->plan().shape, *params);
  view->params = std::move(params);
  last_view_s_ = core::monotonic_seconds();
  view_cost_s_ = last_view_s_ - t;
  timeline_.add_break();  // no step's overhead
  last_step_end_s_ = 0;   // nor any step's wall time
  std::lock_guard lock(run_mutex_);
  view->step = static_cast<long>(run_.step_losses.size());
  run_.model_view = std::move(view);
}

}  // namespace run
