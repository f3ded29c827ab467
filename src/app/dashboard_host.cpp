// The dashboard's controller over the session: the Timeline tab's exports, a lesson's views and the teacher's keys.
#include "app/dashboard_host.hpp"

#include <fmt/format.h>

#include <filesystem>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "core/csv_export.hpp"
#include "core/report.hpp"
#include "core/trace.hpp"
#include "ui/screenshot.hpp"

namespace app {
namespace {

constexpr const char* kExportFolder = "exports";

// Makes the exports folder and runs `write`; its message, or what failed and what to do.
template <typename Write>
std::string write_export(const char* what, const std::string& path, Write write) {
  std::error_code ec;
  std::filesystem::create_directories(kExportFolder, ec);
  if (ec)
    return fmt::format("{} not saved: cannot create the folder {}/ ({}); start trainscope in a folder you can write",
                       what, kExportFolder, ec.message());
  try {
    return write(path);
  } catch (const std::exception& e) {
    return fmt::format("{} not saved: {}", what, e.what());
  }
}

}  // namespace

std::string SessionController::export_trace() {
  std::vector<core::BackendTimeline> timelines;
  for (const auto& r : session_.snapshot())
    if (r.timeline) timelines.push_back(*r.timeline);
  if (timelines.empty()) return "trace not saved: no step has been timed yet";
  return write_export("trace", ui::timestamped_path(kExportFolder, "-trace.json"), [&](const std::string& path) {
    core::write_trace(path, timelines, {{"producer", "trainscope dashboard"},
                                        {"config", core::config_json(session_.settings())}});
    return "trace saved: " + path + " (open it in Perfetto)";
  });
}

std::string SessionController::export_csv() {
  std::vector<core::DevicePeaks> peaks;
  for (auto& b : peaks_.state().backends)
    if (b.peaks) peaks.push_back(std::move(*b.peaks));
  return write_export("CSV", ui::timestamped_path(kExportFolder, "-csv"), [&](const std::string& dir) {
    core::write_csv_dir(dir, session_.snapshot(true), peaks);
    return "CSV saved: " + dir + "/{steps,kernels,peaks}.csv";
  });
}

void SessionController::show(const ui::LessonView& v) {
  if (v.tab)
    if (auto tab = ui::parse_tab(*v.tab)) dashboard_.show(*tab);
  if (v.x_seconds) dashboard_.loss.x_axis = *v.x_seconds ? ui::LossCurves::XAxis::Seconds : ui::LossCurves::XAxis::Step;
  if (v.accuracy) dashboard_.loss.show_accuracy = *v.accuracy;
  if (v.kernels)
    dashboard_.kernels.part = *v.kernels == "tables"       ? ui::KernelTimings::Part::Tables
                              : *v.kernels == "precisions" ? ui::KernelTimings::Part::Precisions
                                                           : ui::KernelTimings::Part::Bars;
  if (v.presentation || v.font_size) {
    ui::StyleOptions style = window_.style();
    if (v.presentation) style.presentation = *v.presentation;
    if (v.font_size) style.font_size = *v.font_size;
    window_.set_style(style);
  }
}

void apply_keys(const std::vector<ui::Key>& keys, ui::PresenterKeys& state, ui::LessonRunner* lesson,
                const ui::DashboardView& view, SessionController& controller, run::Session& session,
                ui::Window& window) {
  if (keys.empty() || ImGui::GetIO().WantTextInput) return;  // typed into a field: ImGui has them
  for (const ui::Key key : keys) {
    switch (state.press(key)) {
      case ui::KeyAction::None: break;
      case ui::KeyAction::Next:
        if (lesson) {
          lesson->next();
          lesson->update(view.now_s, view, controller);
        }
        break;
      case ui::KeyAction::Back:
        if (lesson) lesson->back();
        break;
      case ui::KeyAction::TogglePause:
        session.post(run::Command(session.pause_requested() ? run::Command::Kind::Resume : run::Command::Kind::Pause));
        break;
      case ui::KeyAction::ToggleFullScreen: window.toggle_full_screen(); break;
      case ui::KeyAction::Quit: window.request_close(); break;
    }
  }
}

}  // namespace app
