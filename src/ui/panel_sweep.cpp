// The Sweep tab (see panel_sweep.hpp): a sweep thread measuring points one at a time, and a log-log plot drawn with
// ImDrawList (the plot widget has no log x-axis).
#include "ui/panel_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "run/data.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/text_fit.hpp"

namespace ui {

SweepPanel::~SweepPanel() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SweepPanel::start(const core::TrainConfig& config) {
  if (thread_.joinable()) thread_.join();
  stop_ = false;
  finished_ = false;
  running_ = true;
  {
    std::lock_guard lock(mutex_);
    result_ = {};
    total_ = 0;
    status_ = "loading the data";
  }
  thread_ = std::thread([this, config] {
    try {
      const core::DataSplit data = run::load_data(config);
      run::SweepOptions o;
      o.config = config;
      o.config.validation = false;
      for (int b : run::default_sweep_batches())
        if (b <= data.train.count) o.batches.push_back(b);
      {
        std::lock_guard lock(mutex_);
        status_ = "measuring";
      }
      const run::SweepResult r = run::run_sweep(
          o, data, run::backends_from_config(o.config),
          [&](const run::SweepPoint& p, size_t, size_t total) {
            std::lock_guard lock(mutex_);
            result_.points.push_back(p);
            run::find_crossover(result_);
            total_ = total;
          },
          &stop_);
      std::lock_guard lock(mutex_);
      result_ = r;
      status_ = r.stopped ? "stopped" : "done";
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      status_ = std::string("failed: ") + e.what();
    }
    finished_ = true;
  });
}

void SweepPanel::draw(const DashboardView& view, Controller* controller) {
  if (finished_.exchange(false)) {  // on the UI thread: the sweep ended, training may go on
    running_ = false;
    if (resume_after_ && controller) controller->post(run::Command(run::Command::Kind::Resume));
    resume_after_ = false;
  }
  ImGui::BeginDisabled(controller == nullptr || !view.live);
  if (!running_) {
    if (ImGui::Button("Run sweep") && controller) {
      resume_after_ = !view.pause_requested;
      controller->post(run::Command(run::Command::Kind::Pause));
      start(view.config);
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Pauses training, then each backend trains %s from the same weights at batch sizes\n"
                        "1, 2, 4, ... 4096 (up to the training set): 2 warm-up and 5 timed steps each.\n"
                        "Training resumes at the end.", "the model shown");
  } else if (ImGui::Button("Stop sweep")) {
    stop_ = true;
  }
  ImGui::EndDisabled();
  run::SweepResult r;
  size_t total = 0;
  std::string status;
  {
    std::lock_guard lock(mutex_);
    r = result_;
    total = total_;
    status = status_;
  }
  ImGui::SameLine();
  if (status.empty())
    text_line("samples/s per batch size, GPU against CPU", ImGui::GetColorU32(ImGuiCol_TextDisabled));
  else
    text_line(fmt::format("{}: {} of {} points", status, r.points.size(), total));
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float plot_height = std::max(4 * line, ImGui::GetContentRegionAvail().y - 2.2f * line);
  draw_plot(r, plot_height);
  if (!r.points.empty()) {
    const double s = r.speedup(r.points.back().batch);
    std::string last;
    if (s > 0) last = fmt::format("batch {}: speedup {:.2f}x. ", r.points.back().batch, s);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted((last + "Crossover: " + r.crossover_text).c_str());
    ImGui::PopTextWrapPos();
  }
}

void SweepPanel::draw_plot(const run::SweepResult& r, float height) const {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImGui::Dummy(ImVec2(width, height));
  const float font = ImGui::GetFontSize();
  // Data area: room for the y tick labels on the left, the x tick labels and the axis label below.
  const ImVec2 lo(origin.x + 3.2f * font, origin.y + 0.5f * font);
  const ImVec2 hi(origin.x + width - 0.5f * font, origin.y + height - 2.4f * font);
  if (hi.x - lo.x < 2 * font || hi.y - lo.y < 2 * font) return;
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.35f);
  dl->AddRect(lo, hi, grid);
  // x: log2 of the batch size over 1..4096; y: log10 of samples/s over the decades the points span.
  double y_min = 1e300, y_max = 0;
  for (const auto& p : r.points)
    if (p.measured()) y_min = std::min(y_min, p.samples_per_s), y_max = std::max(y_max, p.samples_per_s);
  if (y_max <= 0) y_min = 1, y_max = 1e6;
  const double d0 = std::floor(std::log10(y_min)), d1 = std::max(d0 + 1, std::ceil(std::log10(y_max)));
  auto px = [&](double batch) { return lo.x + static_cast<float>(std::log2(batch) / 12.0) * (hi.x - lo.x); };
  auto py = [&](double v) { return hi.y - static_cast<float>((std::log10(v) - d0) / (d1 - d0)) * (hi.y - lo.y); };
  for (int e = 0; e <= 12; e += 2) {
    const float x = px(std::exp2(e));
    dl->AddLine(ImVec2(x, lo.y), ImVec2(x, hi.y), grid);
    const std::string label = fmt::format("{}", 1 << e);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(label.c_str()).x / 2, hi.y + 0.2f * font), axis, label.c_str());
  }
  for (double d = d0; d <= d1; ++d) {
    const float y = py(std::pow(10.0, d));
    dl->AddLine(ImVec2(lo.x, y), ImVec2(hi.x, y), grid);
    const std::string label = d >= 6 ? fmt::format("{:g}M", std::pow(10.0, d - 6)) : d >= 3 ? fmt::format("{:g}k", std::pow(10.0, d - 3))
                                                                                        : fmt::format("{:g}", std::pow(10.0, d));
    dl->AddText(ImVec2(lo.x - ImGui::CalcTextSize(label.c_str()).x - 0.3f * font, y - font / 2), axis, label.c_str());
  }
  const char* x_label = "batch size (log scale); y: samples/s (log scale)";
  dl->AddText(ImVec2(lo.x, hi.y + 1.2f * font), axis, x_label);
  if (r.crossover) {  // the crossover: a vertical line and its label
    const float x = px(*r.crossover);
    const ImU32 mark = IM_COL32(200, 40, 40, 255);
    dl->AddLine(ImVec2(x, lo.y), ImVec2(x, hi.y), mark, 2.0f);
    dl->AddText(ImVec2(x + 0.3f * font, lo.y + 0.2f * font), mark, fmt::format("crossover: {}", *r.crossover).c_str());
  }
  float legend_y = lo.y + 0.2f * font;
  for (const std::string& s : r.series()) {
    const ImU32 color = backend_color(s.rfind("gpu", 0) == 0 ? "gpu" : "cpu");
    ImVec2 prev(-1, -1);
    for (const auto& p : r.points) {
      if (p.series != s || !p.measured()) continue;
      const ImVec2 at(px(p.batch), py(p.samples_per_s));
      if (prev.x >= 0) dl->AddLine(prev, at, color, 2.0f);
      dl->AddCircleFilled(at, 0.25f * font, color);
      prev = at;
    }
    const std::string name = s == "gpu" ? "GPU" : s == "cpu" ? "CPU" : s;
    dl->AddText(ImVec2(lo.x + 0.4f * font, legend_y), color, name.c_str());
    legend_y += font * 1.1f;
  }
}

}  // namespace ui
