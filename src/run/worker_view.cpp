// One backend's training loop, what the model sees (core/model_view.hpp): a few test images predicted by the trainer
// in use, with the parameters they were predicted with and a CNN's first filters, a few times a second; and on 2-D
// data the decision boundary's map, the classes the trainer predicts over a grid. Their time is neither training
// time nor any step's overhead.
#include <algorithm>
#include <memory>
#include <mutex>

#include "core/boundary.hpp"

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
  if (view->positions > 0 && !view->targets.empty() && view->targets.front() >= 0) generate(*view);
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

// Text: each shown sequence's first half as a prompt, the rest written by the model (core::generate_greedy).
void Worker::generate(core::ModelView& view) {
  view.prompt = view.positions / 2;
  view.generated = core::generate_greedy(*trainer_, view.images, view.count(), view.positions, view.prompt);
}

void Worker::prepare_boundary() {
  prepare_model_view();
  boundary_inputs_.clear();
  const core::Dataset& train = data_->train;
  if (train.features != 2 || train.count == 0) return;
  boundary_grid_ = core::boundary_grid(train);
  boundary_inputs_ = core::grid_points(boundary_grid_);
  core::BackendRun::Boundary b;
  b.grid = boundary_grid_;
  const int every = std::max(1, train.count / core::kBoundaryPoints);
  for (int i = 0; i < train.count; i += every) {
    b.points.insert(b.points.end(), train.row(i), train.row(i) + 2);
    b.labels.push_back(train.y[static_cast<size_t>(i)]);
  }
  std::lock_guard lock(run_mutex_);
  run_.boundary = std::move(b);
}

void Worker::update_boundary(bool now) {
  update_model_view(now);
  if (boundary_inputs_.empty() || !trainer_) return;
  const double t = core::monotonic_seconds();
  if (!now && t - last_boundary_s_ < std::max(core::kBoundarySeconds, 4 * boundary_cost_s_)) return;
  clock_.stop();
  std::vector<int32_t> classes = trainer_->predict(boundary_inputs_, boundary_inputs_.size() / 2);
  last_boundary_s_ = core::monotonic_seconds();
  boundary_cost_s_ = last_boundary_s_ - t;
  if (classes.empty()) {  // this trainer cannot predict: no map
    boundary_inputs_.clear();
    return;
  }
  timeline_.add_break();  // the map is no step's overhead
  last_step_end_s_ = 0;   // nor any step's wall time (CSV, the run's busy share)
  std::lock_guard lock(run_mutex_);
  run_.boundary.classes = std::move(classes);
  run_.boundary.step = static_cast<long>(run_.step_losses.size());
}

}  // namespace run
