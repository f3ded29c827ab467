// Incremental plot series from session snapshots.
#include "ui/dashboard_model.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ui {

ImU32 backend_color(const std::string& backend) { return backend == "gpu" ? kGpuColor : kCpuColor; }

const char* backend_title(const std::string& backend) { return backend == "gpu" ? "GPU" : "CPU"; }

void DashboardModel::update(const std::vector<core::BackendRun>& runs) {
  for (const auto& run : runs) {
    BackendSeries& s = series_[run.name];
    if (run.step_losses.size() < s.steps_seen || run.epochs.size() < s.epochs_seen) s = BackendSeries{};  // a reset
    const size_t n = std::min(run.step_losses.size(), run.step_seconds.size());
    for (size_t i = s.steps_seen; i < n; ++i) {
      s.loss_by_step.push(static_cast<double>(i + 1), run.step_losses[i]);
      s.loss_by_seconds.push(run.step_seconds[i], run.step_losses[i]);
    }
    s.steps_seen = std::max(s.steps_seen, n);
    double seconds = 0;
    for (size_t i = 0; i < run.epochs.size(); ++i) {
      seconds += run.epochs[i].seconds;
      if (i < s.epochs_seen) continue;
      s.accuracy_by_epoch.push(run.epochs[i].epoch, 100.0 * run.epochs[i].test_accuracy);
      s.accuracy_by_seconds.push(seconds, 100.0 * run.epochs[i].test_accuracy);
    }
    s.epochs_seen = run.epochs.size();
  }
}

const BackendSeries* DashboardModel::series(const std::string& backend) const {
  auto it = series_.find(backend);
  return it == series_.end() ? nullptr : &it->second;
}

const core::BackendRun* DashboardView::run(const std::string& backend) const {
  for (const auto& r : runs)
    if (r.name == backend) return &r;
  return nullptr;
}

const core::BackendPeaks* DashboardView::peaks_of(const std::string& backend) const {
  for (const auto& p : peaks)
    if (p.backend == backend) return &p;
  return nullptr;
}

core::RoofCeilings DashboardView::roof(const core::BackendRun& r) const {
  const core::BackendPeaks* p = peaks_of(r.name);
  return p && p->peaks ? core::roof_ceilings(*p->peaks, r.config.threads) : core::RoofCeilings{};
}

double DashboardView::age(const core::BackendRun& r) const {
  if (now_s <= 0 || r.updated_s <= 0) return 0;
  return std::max(0.0, now_s - r.updated_s);
}

std::string pending_changes(const core::BackendRun& run, const core::TrainConfig& shown) {
  const core::TrainConfig& now = run.config;
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  if (now.batch != shown.batch) add(fmt::format("batch {}", shown.batch));
  if (now.lr != shown.lr) add(fmt::format("lr {:g}", shown.lr));
  if (now.optimizer != shown.optimizer) add(core::to_string(shown.optimizer));
  if (now.precision != shown.precision) add(core::to_string(shown.precision));
  if (run.name == "cpu" && now.threads != shown.threads) add(fmt::format("{} threads", shown.threads));
  for (auto t : core::kToggles)
    if (now.execution[t] != shown.execution[t]) add(fmt::format("{} {}", core::to_string(t), shown.execution[t] ? "on" : "off"));
  if (now.input != shown.input) add("input " + core::to_string(shown.input));
  if (now.hidden != shown.hidden || now.activation != shown.activation || now.dataset != shown.dataset)
    add("new model");
  return out;
}

double time_to_loss(const core::BackendRun& run, double target, int window) {
  const size_t n = std::min(run.step_losses.size(), run.step_seconds.size());
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += run.step_losses[i];
    if (i >= static_cast<size_t>(window)) sum -= run.step_losses[i - window];
    if (i + 1 >= static_cast<size_t>(window) && sum / window <= target) return run.step_seconds[i];
  }
  return -1;
}

}  // namespace ui
