// The dashboard's layout and status line.
#include "ui/dashboard.hpp"

#include <fmt/format.h>

#include "ui/screenshot.hpp"

namespace ui {

void Dashboard::load(const Settings& s) {
  auto shown = [&](const char* name, bool fallback) {
    auto it = s.panels.find(name);
    return it == s.panels.end() ? fallback : it->second;
  };
  show_race = shown("race", true);
  show_loss = shown("loss", true);
  show_kernels = shown("kernels", true);
  show_memory = shown("memory", true);
  show_bandwidth = shown("bandwidth", true);
  show_controls = shown("controls", true);
  loss.x_axis = s.plot_x_axis == "seconds" ? LossCurves::XAxis::Seconds : LossCurves::XAxis::Step;
}

void Dashboard::save(Settings& s) const {
  s.panels = {{"race", show_race},
              {"loss", show_loss},
              {"kernels", show_kernels},
              {"memory", show_memory},
              {"bandwidth", show_bandwidth},
              {"controls", show_controls}};
  s.plot_x_axis = loss.x_axis == LossCurves::XAxis::Seconds ? "seconds" : "step";
}

std::string Dashboard::footer(const DashboardView& view) {
  FooterInfo info;
  std::string devices;
  for (const auto& r : view.runs)
    devices += fmt::format("{}{}: {}", devices.empty() ? "" : " | ", backend_title(r.name), r.device);
  info.devices = devices;
  const core::BackendRun* any = view.runs.empty() ? nullptr : &view.runs.front();
  const core::TrainConfig& cfg = any ? any->config : view.config;
  std::string dims = cfg.dataset == "spiral" ? "2" : "784";
  for (int h : cfg.hidden) dims += fmt::format("-{}", h);
  dims += fmt::format("-{}", cfg.dataset == "spiral" ? cfg.spiral_classes : 10);
  info.model = fmt::format("MLP {} on {}, {} {}", dims, cfg.dataset, core::to_string(cfg.activation),
                           core::to_string(cfg.optimizer));
  info.batch = fmt::format("batch {}", cfg.batch);
  // The precision in force, short enough for one line: one name when every backend has the same, else each
  // backend's; fp16's skipped steps per backend when there were any (the race header has the loss scales).
  std::string precision, per_backend, skipped;
  bool same = true, any_skipped = false;
  for (const auto& r : view.runs) {
    const std::string p = core::to_string(r.config.precision);
    if (!precision.empty() && p != precision) same = false;
    if (precision.empty()) precision = p;
    per_backend += fmt::format("{}{} {}", per_backend.empty() ? "" : ", ", backend_title(r.name), p);
    skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", backend_title(r.name), r.skipped_steps);
    any_skipped = any_skipped || r.skipped_steps > 0;
  }
  info.precision = view.runs.empty() ? core::to_string(cfg.precision) : same ? precision : per_backend;
  if (any_skipped) info.precision += " (fp16 steps skipped: " + skipped + ")";
  return footer_text(info);
}

void Dashboard::draw(const DashboardView& view, Controller* controller, const std::string& toast) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::Begin("trainscope", nullptr, flags);
  if (ImGui::BeginMenuBar()) {
    if (ImGui::BeginMenu("View")) {
      ImGui::MenuItem("Race header", nullptr, &show_race);
      ImGui::MenuItem("Loss curves", nullptr, &show_loss);
      ImGui::MenuItem("Kernel timings", nullptr, &show_kernels);
      ImGui::MenuItem("Memory", nullptr, &show_memory);
      ImGui::MenuItem("Memory bandwidth", nullptr, &show_bandwidth);
      ImGui::MenuItem("Controls", nullptr, &show_controls);
      ImGui::EndMenu();
    }
    ImGui::TextDisabled("trainscope: one MLP, trained by Vulkan compute and by a CPU thread pool at once");
    ImGui::EndMenuBar();
  }

  const float line = ImGui::GetFrameHeightWithSpacing();
  if (show_race) {
    race.draw(view);
    ImGui::Separator();
  }
  const float body = ImGui::GetContentRegionAvail().y - line * 1.2f;  // the status line below
  const float width = ImGui::GetContentRegionAvail().x;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  // Wide windows (a projector at 1600x900 and up): three columns, every panel in view at once. Narrower: the
  // kernel timings, bandwidth and controls share the right column, one under the other.
  const bool three =
      width >= 70 * ImGui::GetFontSize() && show_kernels && (show_memory || show_bandwidth || show_controls);
  const bool right = show_kernels || show_memory || show_bandwidth || show_controls;
  const float left_width = !right ? 0.0f : three ? width * 0.31f : width * 0.5f;
  if (show_loss) {
    ImGui::BeginChild("loss_panel", ImVec2(left_width, body), true);
    loss.draw(view);
    ImGui::EndChild();
    if (right) ImGui::SameLine();
  }
  auto header = [](const char* title) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextUnformatted(title);
    ImGui::PopStyleColor();
    ImGui::Separator();
  };
  if (three) {
    const float middle = (width - left_width - 2 * gap) * 0.62f;
    ImGui::BeginChild("kernels_panel", ImVec2(middle, body), true, ImGuiWindowFlags_HorizontalScrollbar);
    header("KERNEL TIMINGS");
    kernels.draw(view);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("side_panel", ImVec2(0, body), true);
    if (show_controls) {
      header("CONTROLS");
      controls.draw(view, controller);
      ImGui::Spacing();
    }
    if (show_memory) {
      header("MEMORY");
      memory.draw(view);
      ImGui::Spacing();
    }
    if (show_bandwidth) {
      header("MEMORY BANDWIDTH");
      bandwidth.draw(view);
    }
    ImGui::EndChild();
  } else if (right) {
    ImGui::BeginChild("side_panel", ImVec2(0, body), true);
    if (show_kernels && ImGui::CollapsingHeader("Kernel timings", ImGuiTreeNodeFlags_DefaultOpen)) kernels.draw(view);
    if (show_memory && ImGui::CollapsingHeader("Memory", ImGuiTreeNodeFlags_DefaultOpen)) memory.draw(view);
    if (show_bandwidth && ImGui::CollapsingHeader("Memory bandwidth", ImGuiTreeNodeFlags_DefaultOpen))
      bandwidth.draw(view);
    if (show_controls && ImGui::CollapsingHeader("Controls", ImGuiTreeNodeFlags_DefaultOpen))
      controls.draw(view, controller);
    ImGui::EndChild();
  }

  // Status line: what runs where, how fast the UI itself is, the last event.
  std::string status;
  for (const auto& r : view.runs) {
    status += fmt::format("{}{}: {}", status.empty() ? "" : "   |   ", backend_title(r.name),
                          r.device.empty() ? "starting" : r.device);
    if (!r.status.empty()) status += fmt::format(" ({})", r.status);
  }
  if (view.ui_frame_ms > 0)
    status += fmt::format("   |   UI frame {:.1f} ms (p95 {:.1f})", view.ui_frame_ms, view.ui_frame_p95_ms);
  if (!toast.empty()) status += "   |   " + toast;
  ImGui::TextUnformatted(status.c_str());
  ImGui::End();
}

}  // namespace ui
