// The dashboard's run-time choices (app::DashboardApp): how often it redraws, when a frame is due (the view's
// signature), the fair mode's default, the precisions the GPU compiles ahead, and --steady.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "ui/dashboard_model.hpp"
#include "ui/lesson.hpp"

namespace app {

// Rendering on demand (DashboardApp's frame loop): how often it looks at the session without input, the redraws a
// second that new figures get, and how long after the user's last input it keeps drawing at --max-fps.
inline constexpr double kPollSeconds = 0.1;
inline constexpr double kDataFps = 2;
inline constexpr double kSettleSeconds = 0.3;

// What the window shows, as text: a frame is drawn when it changes (and the last one is not too recent).
std::string view_signature(const ui::DashboardView& v, const std::string& toast);

// The fair mode by default where two trainers at once would distort each other's figures: a software GPU (it runs on
// the CPU's cores) or at most 4 hardware threads. False for one backend or --sequential, or when Vulkan says nothing.
bool fair_by_default(const core::TrainConfig& cfg);

// The precisions the GPU compiles in the background from the start, in order: those the controls can select, the
// others before the one it starts with (whose plan its first trainer compiled already); with a lesson played
// unattended (`autoplay`) only those it uses (the CI's lessons pay for no compile they do not need).
std::vector<core::Precision> compile_ahead(const core::TrainConfig& cfg, const ui::Lesson* autoplay);

// --steady N,S: steps 1..1000000 and seconds 0..600, or none for "". Throws core::Error(InvalidArgument).
std::optional<ui::LessonSteady> parse_steady(const std::string& text);

}  // namespace app
