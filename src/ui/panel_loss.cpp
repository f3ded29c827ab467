// The loss curves panel.
#include "ui/panel_loss.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "ui/layout.hpp"
#include "ui/text_fit.hpp"

namespace ui {

constexpr ImU32 kOverflowColor = IM_COL32(230, 60, 60, 255);

LossCurves::LossCurves() : loss_plot_("step", "training loss"), accuracy_plot_("epoch", "test accuracy (%)") {}

void LossCurves::draw_time_to_loss(const DashboardView& view) {
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 4, ImGui::GetContentRegionAvail().x));
  ImGui::DragFloat("##target", &target_loss, 0.01f, 0.01f, 10.0f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The target loss (drag to change): the training time each side needed until its 20-step\n"
                      "average loss reached it.");
  if (ImGui::GetContentRegionAvail().x - ImGui::GetItemRectSize().x < 3 * ImGui::GetFontSize()) return;
  ImGui::SameLine();
  // "reached: GPU 40 s, CPU 12 s", shorter forms where the panel is narrow (1280x720 presentation): the times first.
  std::vector<std::string> times;
  for (const char* name : {"gpu", "cpu"}) {
    const core::BackendRun* r = view.run(name);
    if (!r) continue;
    const double t = time_to_loss(*r, target_loss);
    times.push_back(fmt::format("{} {}", backend_title(name), t < 0 ? std::string("-") : format_duration(t)));
  }
  std::string joined;
  for (const auto& t : times) joined += (joined.empty() ? "" : ", ") + t;
  const float room = ImGui::GetContentRegionAvail().x;
  const std::string full = "reached: " + joined;
  text_line(ImGui::CalcTextSize(full.c_str()).x <= room ? full : joined, 0, room);
  if (ImGui::IsItemHovered())
    wrapped_tooltip(fmt::format("The training time each side needed until its 20-step average loss reached {:.2f} "
                                "(\"-\": not yet). Drag the number to change the target.",
                                target_loss));
}

void LossCurves::fit_to_slower_side(const DashboardView& view, bool by_step) {
  // By step both curves coincide for as many steps as both trained; the faster side's thousands more would squeeze
  // the slower one's curve into the left edge, so auto-fit shows the slower side's steps (the faster one runs on past
  // the right edge, which the x label says; zooming out shows it).
  long fewest = 0, most = 0;
  std::string ahead;
  for (const auto& run : view.runs) {
    const long n = static_cast<long>(run.step_losses.size());
    if (n == 0) continue;
    if (fewest == 0 || n < fewest) fewest = n;
    if (n > most) most = n, ahead = backend_title(run.name);
  }
  const bool clip = by_step && view.runs.size() > 1 && fewest > 0 && most > 2 * fewest;
  loss_plot_.set_fit_x_limit(clip ? 1.05 * static_cast<double>(fewest) : 0);
  if (clip)
    loss_plot_.set_axis_labels(fmt::format("step · {} at {} →", ahead, format_rate(static_cast<double>(most))),
                               "training loss");
}

LossCurves::Curves LossCurves::curves(const DashboardView& view, bool by_step) {
  Curves c;
  struct Pending {
    double x;
    std::string backends, label;
    ImU32 color;
  };
  std::vector<Pending> pending;
  // The CPU first, so that the GPU's curve is drawn on top (in steps they coincide; the GPU's is usually shorter),
  // and the CPU's wider: where the two coincide it shows as a blue outline around the GPU's line, never hidden.
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
    const float width = run.name == "gpu" ? 0.8f : 1.6f;
    c.losses.push_back({title, backend_color(run.name), by_step ? &s->loss_by_step : &s->loss_by_seconds, width});
    c.accuracies.push_back(
        {title, backend_color(run.name), by_step ? &s->accuracy_by_epoch : &s->accuracy_by_seconds, width});
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
  for (size_t i = 0; i < pending.size(); ++i)
    c.markers.push_back({pending[i].x, marker_labels_[i].c_str(), pending[i].color});
  return c;
}

void LossCurves::draw_plot_selector(bool by_step, bool both, float width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  Plot& shown = show_accuracy ? accuracy_plot_ : loss_plot_;
  std::string preview = fmt::format("{} by {}", show_accuracy ? "accuracy" : "loss",
                                    by_step ? (show_accuracy ? "epoch" : "step") : "time");
  if (shown.log_y()) preview += ", log";
  if (!shown.auto_fit()) preview += ", zoomed";
  ImGui::SetNextItemWidth(std::min(width, ImGui::CalcTextSize(preview.c_str()).x + ImGui::GetFrameHeight() +
                                              2 * style.FramePadding.x));
  if (ImGui::BeginCombo("##plot", preview.c_str())) {
    if (!both) {
      if (ImGui::RadioButton("loss", !show_accuracy)) show_accuracy = false;
      ImGui::SameLine();
      if (ImGui::RadioButton("test accuracy", show_accuracy)) show_accuracy = true;
    }
    int axis = by_step ? 0 : 1;
    bool changed = ImGui::RadioButton("by step (epoch)", &axis, 0);
    changed = ImGui::RadioButton("by training time", &axis, 1) || changed;
    if (changed) {
      x_axis = axis == 0 ? XAxis::Step : XAxis::Seconds;
      loss_plot_.set_auto_fit(true);
      accuracy_plot_.set_auto_fit(true);
    }
    bool log = shown.log_y();
    if (ImGui::Checkbox("log y", &log)) shown.set_log_y(log);
    bool fit = shown.auto_fit();
    if (ImGui::Checkbox("auto-fit", &fit)) shown.set_auto_fit(fit);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", fmt::format("The x-axis. By step: both sides do the same work per step, so their curves "
                                        "overlap.\nBy training time (pauses excluded): the faster side reaches each "
                                        "loss sooner; this is\nwhere the speedup is seen.\n\n{}",
                                        Plot::help_text()).c_str());
}

void LossCurves::draw(const DashboardView& view, float min_loss_canvas) {
  const bool by_step = x_axis == XAxis::Step;
  loss_plot_.set_axis_labels(by_step ? "step" : "training seconds", "training loss");
  accuracy_plot_.set_axis_labels(by_step ? "epoch" : "training seconds", "test accuracy (%)");
  accuracy_plot_.set_integer_x(by_step);
  fit_to_slower_side(view, by_step);
  const Curves c = curves(view, by_step);

  // Room: the loss plot first (its canvas at least min_loss_canvas), then the accuracy plot (at least
  // kMinAccuracyLines lines of canvas), then the time-to-loss row. When the accuracy plot does not fit too, the
  // selector in the plot's header switches between the two plots.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().y;
  const float width = ImGui::GetContentRegionAvail().x;
  const float row = ImGui::GetFrameHeightWithSpacing();
  loss_plot_.set_header_items(false);  // the selector below offers them: the header is one row in every state
  accuracy_plot_.set_header_items(false);
  const float accuracy_min =
      accuracy_plot_.header_height(width) + kMinAccuracyLines * ImGui::GetTextLineHeightWithSpacing();
  const float loss_min = loss_plot_.header_height(width) + min_loss_canvas + style.ItemSpacing.y;
  const bool both = avail - loss_min >= accuracy_min + row;
  const bool ttl_row = avail - loss_min - (both ? accuracy_min : 0.0f) >= row;
  if (both) show_accuracy = false;
  accuracy_shown_ = both || show_accuracy;

  // One selector for the plots: which plot (when only one fits), the x-axis, log y, auto-fit.
  auto header_prefix = [&] { draw_plot_selector(by_step, both, width); };
  const float ttl = ttl_row ? row : 0.0f;
  loss_drawn_ = true;
  if (both) {
    const float accuracy_height = std::max(accuracy_min, 0.32f * avail) - style.ItemSpacing.y;
    loss_plot_.draw("loss", c.losses, c.markers, ImVec2(0, avail - accuracy_height - ttl - style.ItemSpacing.y),
                    header_prefix);
    accuracy_plot_.draw("accuracy", c.accuracies, {}, ImVec2(0, accuracy_height));
  } else if (show_accuracy) {
    loss_drawn_ = false;
    accuracy_plot_.draw("accuracy", c.accuracies, {}, ImVec2(0, avail - ttl), header_prefix);
  } else {
    loss_plot_.draw("loss", c.losses, c.markers, ImVec2(0, avail - ttl), header_prefix);
  }
  if (ttl_row) draw_time_to_loss(view);
}

}  // namespace ui
