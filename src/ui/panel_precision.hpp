// The speed of each precision a run went through: one row per (backend, precision, batch size) from
// core::BackendRun::precisions, so that a class can switch fp32 / fp16 / bf16 live and compare the rows.
#pragma once
#include <vector>

#include "ui/panel.hpp"

namespace ui {

// One table row: a backend's measured speed at one (precision, batch size).
struct PrecisionSpeedRow {
  const core::BackendRun* run = nullptr;
  const core::PrecisionRow* row = nullptr;
  bool current = false;  // the run's precision and batch size in force now
};

// The rows of `view`, backend by backend (in the view's order), each backend's sorted by precision (fp32, fp16,
// bf16) then batch size; rows without a measured step are left out. Pointers into `view`.
std::vector<PrecisionSpeedRow> precision_speed_rows(const DashboardView& view);

struct PrecisionSpeeds {
  void draw(const DashboardView& view);
};

}  // namespace ui
