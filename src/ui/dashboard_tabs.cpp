// The dashboard's tabs by name and by title (ui/dashboard_tabs.hpp).
#include "ui/dashboard_tabs.hpp"

namespace ui {

const char* tab_name(Tab tab) {
  switch (tab) {
    case Tab::Controls: return "controls";
    case Tab::Kernels: return "kernels";
    case Tab::Memory: return "memory";
    case Tab::Bandwidth: return "bandwidth";
    case Tab::Roofline: return "roofline";
    case Tab::Timeline: return "timeline";
    case Tab::Sweep: return "sweep";
    case Tab::Boundary: return "boundary";
    case Tab::Model: return "model";
  }
  return "controls";
}

std::optional<Tab> parse_tab(std::string_view name) {
  for (Tab t : kTabs)
    if (name == tab_name(t)) return t;
  return std::nullopt;
}

const char* tab_title(Tab tab) {
  switch (tab) {
    case Tab::Controls: return "Controls";
    case Tab::Kernels: return "Kernels";
    case Tab::Memory: return "Memory";
    case Tab::Bandwidth: return "Bandwidth";
    case Tab::Roofline: return "Roofline";
    case Tab::Timeline: return "Timeline";
    case Tab::Sweep: return "Sweep";
    case Tab::Boundary: return "Boundary";
    case Tab::Model: return "Model";
  }
  return "";
}

}  // namespace ui
