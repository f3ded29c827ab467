// The loss curves panel.
#include "ui/panel_loss.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace ui {

constexpr ImU32 kOverflowColor = IM_COL32(230, 60, 60, 255);

LossCurves::LossCurves() : loss_plot_("step", "training loss"), accuracy_plot_("epoch", "test accuracy (%)") {}

void LossCurves::draw(const DashboardView& view) {
  int mode = x_axis == XAxis::Step ? 0 : 1;
  ImGui::TextUnformatted("x-axis:");
  ImGui::SameLine();
  ImGui::RadioButton("steps", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("training seconds", &mode, 1);
  ImGui::SameLine();
  help_marker("Steps: both sides do the same work per step, so their curves overlap. Training seconds (pauses "
              "excluded): the faster side reaches each loss sooner; this is where the speedup is seen.");
  const XAxis wanted = mode == 0 ? XAxis::Step : XAxis::Seconds;
  if (wanted != x_axis) {
    x_axis = wanted;
    loss_plot_.set_auto_fit(true);
    accuracy_plot_.set_auto_fit(true);
  }
  const bool by_step = x_axis == XAxis::Step;
  loss_plot_.set_axis_labels(by_step ? "step" : "training seconds", "training loss");
  accuracy_plot_.set_axis_labels(by_step ? "epoch" : "training seconds", "test accuracy (%)");
  accuracy_plot_.set_integer_x(by_step);

  std::vector<PlotSeries> losses, accuracies;
  struct Pending {
    double x;
    std::string backends, label;
    ImU32 color;
  };
  std::vector<Pending> pending;
  // The CPU first, so that the GPU's curve is drawn on top (in steps they coincide; the GPU's is usually shorter).
  std::vector<const core::BackendRun*> order;
  for (const auto& run : view.runs)
    if (run.name != "gpu") order.push_back(&run);
  for (const auto& run : view.runs)
    if (run.name == "gpu") order.push_back(&run);
  for (const core::BackendRun* r : order) {
    const core::BackendRun& run = *r;
    const BackendSeries* s = view.model ? view.model->series(run.name) : nullptr;
    if (!s) continue;
    const char* title = backend_title(run.name);
    losses.push_back({title, backend_color(run.name), by_step ? &s->loss_by_step : &s->loss_by_seconds});
    accuracies.push_back({title, backend_color(run.name), by_step ? &s->accuracy_by_epoch : &s->accuracy_by_seconds});
    for (const auto& m : run.markers) {
      const double x = by_step ? static_cast<double>(m.step + 1) : m.seconds;
      // On the step axis both backends' markers of the same change sit on the same line: one label names both.
      auto same = std::find_if(pending.begin(), pending.end(),
                               [&](const Pending& p) { return by_step && p.x == x && p.label == m.label; });
      if (same != pending.end()) {
        same->backends += std::string("+") + title;
        same->color = m.label.rfind("fp16 overflow", 0) == 0 ? kOverflowColor : ImGui::GetColorU32(ImGuiCol_Text);
        continue;
      }
      // An fp16 overflow (steps skipped, loss scale lowered) in red: it is an event, not a setting the user chose.
      const bool overflow = m.label.rfind("fp16 overflow", 0) == 0;
      pending.push_back({x, title, m.label, overflow ? kOverflowColor : backend_color(run.name)});
    }
  }
  // Labels first, pointers after: marker_labels_ does not reallocate once filled.
  marker_labels_.clear();
  for (const Pending& p : pending) marker_labels_.push_back(fmt::format("{}: {}", p.backends, p.label));
  std::vector<PlotMarker> markers;
  for (size_t i = 0; i < pending.size(); ++i)
    markers.push_back({pending[i].x, marker_labels_[i].c_str(), pending[i].color});
  const float avail = ImGui::GetContentRegionAvail().y;
  loss_plot_.draw("loss", losses, markers, ImVec2(0, avail * 0.62f));
  accuracy_plot_.draw("accuracy", accuracies, {}, ImVec2(0, 0));
}

}  // namespace ui
