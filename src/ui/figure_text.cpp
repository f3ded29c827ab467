// The shared figure formatting (ui/figure_text.hpp).
#include "ui/figure_text.hpp"

#include <fmt/format.h>

namespace ui {

std::string speedup_figure(double speedup) {
  if (speedup < 0.0005) return "<0.001x";
  return fmt::format("{:.{}f}x", speedup, speedup >= 10 ? 0 : speedup >= 0.1 ? 2 : 3);
}

std::string as_fast_text(double speedup, bool short_form) {
  const bool gpu = speedup >= 1;
  const double factor = gpu ? speedup : 1 / speedup;
  const char* who = gpu ? (short_form ? "GPU" : "the GPU is") : (short_form ? "CPU" : "the CPU is");
  return fmt::format("{} {:.{}f}x as fast", who, factor, factor >= 100 ? 0 : 1);
}

}  // namespace ui
