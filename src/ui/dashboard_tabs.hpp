// ui::Tab: the dashboard's views beside the plots (kTabs, in the order they are shown), their names in settings and
// lessons and their titles on screen. A header of its own, so that what needs only the tabs (the layout, the lesson
// scripts) need not include the whole dashboard, which includes the layout.
#pragma once
#include <optional>
#include <string_view>

namespace ui {

// The views beside the plots.
enum class Tab { Controls, Kernels, Memory, Bandwidth, Roofline, Timeline, Sweep, Boundary, Model };
inline constexpr Tab kTabs[] = {Tab::Controls, Tab::Kernels, Tab::Memory,   Tab::Bandwidth, Tab::Roofline,
                                Tab::Timeline, Tab::Sweep,   Tab::Boundary, Tab::Model};
// "controls", "kernels", "memory", "bandwidth", "roofline", "timeline", "sweep", "boundary", "model"
const char* tab_name(Tab tab);
std::optional<Tab> parse_tab(std::string_view name);  // the inverse; nullopt for an unknown name
const char* tab_title(Tab tab);                       // "Controls", "Kernels", ...: the tab's title on screen

}  // namespace ui
