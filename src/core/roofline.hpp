// The roofline model (Williams, Waterman & Patterson, "Roofline: an insightful visual performance model for multicore
// architectures", CACM 2009): a kernel of arithmetic intensity I (FLOP per byte of compulsory memory traffic) can run
// at most at min(compute peak, memory bandwidth x I) GFLOP/s. Below the ridge point I = compute / bandwidth the memory
// ceiling binds it, above it the compute ceiling. Pure math on figures: the per-entry FLOPs and bytes of the StepPlan,
// the measured times of a KernelTable and the measured ceilings (core/peaks.hpp); the dashboard's roofline panel and
// train's report draw and print what this computes.
#pragma once
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/peaks.hpp"
#include "core/step_plan.hpp"

namespace core {

enum class Bound { Memory, Compute };
const char* to_string(Bound bound);  // "memory" | "compute"

// FLOP per byte where the two ceilings meet: compute_gflops / bandwidth_gbps; 0 when either is unknown (0).
double ridge_intensity(const RoofCeilings& roof);
// The roof at `intensity` (FLOP/byte): min(compute_gflops, bandwidth_gbps x intensity), GFLOP/s. With one ceiling
// unknown (0), the other alone; 0 when both are.
double attainable_gflops(const RoofCeilings& roof, double intensity);
// The ceiling that binds a kernel of `intensity`: Memory below the ridge (and for kernels without FLOPs), Compute at
// or above it. With the compute ceiling unknown, Memory; with the bandwidth unknown, Compute.
Bound binding_ceiling(const RoofCeilings& roof, double intensity);

// One kernel (a StepPlan entry) on the roofline.
struct RooflinePoint {
  std::string kernel;      // "matmul_forward"
  std::string label;       // PlanEntry::label(): "matmul_forward L0 (128x784 · 256x784ᵀ)"
  double flops = 0;        // per call, analytic
  double bytes = 0;        // per call, compulsory
  double mean_ms = 0;      // measured, per call
  double intensity = 0;    // flops / bytes, FLOP/byte (0: a kernel that only moves data)
  double gflops = 0;       // achieved: flops / time / 1e9
  double gbps = 0;         // achieved: bytes / time / 1e9
  Bound bound = Bound::Memory;
  double roof_gflops = 0;  // attainable_gflops at this intensity
  // 100 x achieved / roof: gflops / roof_gflops for a compute-bound kernel, gbps / bandwidth for a memory-bound one
  // (the same number where both are defined, and defined too for kernels without FLOPs). 0 when the ceiling is unknown.
  double pct_of_roof = 0;
  // upload_batch (--input host): a host-to-device copy, not a kernel. Its gbps is the host-to-device bandwidth it
  // achieved; no roof of the device applies (pct_of_roof 0, roof_gflops 0), and it has no FLOPs to place it.
  bool transfer = false;
};

// The point of one kernel of `flops` and `bytes` per call that took `mean_ms` per call.
RooflinePoint roofline_point(const RoofCeilings& roof, std::string kernel, std::string label, double flops,
                             double bytes, double mean_ms);

// One point per plan entry that `table` has measured (entries with calls > 0), in plan order: FLOPs and bytes from
// `plan`, times from table.entry_rows(). Empty when the table's entries are not the plan's (another configuration).
std::vector<RooflinePoint> roofline_points(const RoofCeilings& roof, const StepPlan& plan, const KernelTable& table);

// One point per kernel name of `rows` (KernelTable::rows(), where the plan entries of one kernel, e.g. matmul_forward
// of every layer, are summed): per call flops = gflops x mean time and bytes = gbps x mean time, so the intensity is
// gflops / gbps (the summed FLOPs / the summed bytes) and the achieved GFLOP/s is the row's. Rows without calls are
// left out. The dashboard's dots and train's report (one dot per kernel per backend).
std::vector<RooflinePoint> roofline_points(const RoofCeilings& roof, const std::vector<KernelRow>& rows);

// The log-log axes of a roofline chart: decades that hold every point and the ridge, mapped to [0, 1] x [0, 1]
// (u to the right, v upwards). Points with 0 FLOPs have no place on a log axis and are left out of the ranges.
struct RooflineAxes {
  double x_lo = 0.01, x_hi = 100;  // FLOP/byte, powers of ten
  double y_lo = 0.1, y_hi = 1000;  // GFLOP/s, powers of ten
  double u(double intensity) const;  // (log10 x - log10 x_lo) / (log10 x_hi - log10 x_lo)
  double v(double gflops) const;
};
// Axes for `points` and the ceilings of every roof in `roofs` (their ridges and their compute ceilings inside).
RooflineAxes roofline_axes(const std::vector<RooflinePoint>& points, const std::vector<RoofCeilings>& roofs);

}  // namespace core
