// Roofline arithmetic (roofline.hpp).
#include "core/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace core {

const char* to_string(Bound bound) { return bound == Bound::Memory ? "memory" : "compute"; }

double ridge_intensity(const RoofCeilings& roof) {
  return roof.bandwidth_gbps > 0 && roof.compute_gflops > 0 ? roof.compute_gflops / roof.bandwidth_gbps : 0;
}

double attainable_gflops(const RoofCeilings& roof, double intensity) {
  const double memory = roof.bandwidth_gbps * std::max(0.0, intensity);  // GB/s x FLOP/byte = GFLOP/s
  if (roof.bandwidth_gbps <= 0) return roof.compute_gflops;
  if (roof.compute_gflops <= 0) return memory;
  return std::min(roof.compute_gflops, memory);
}

Bound binding_ceiling(const RoofCeilings& roof, double intensity) {
  if (roof.compute_gflops <= 0) return Bound::Memory;
  if (roof.bandwidth_gbps <= 0) return Bound::Compute;
  return intensity < ridge_intensity(roof) || intensity <= 0 ? Bound::Memory : Bound::Compute;
}

RooflinePoint roofline_point(const RoofCeilings& roof, std::string kernel, std::string label, double flops,
                             double bytes, double mean_ms) {
  RooflinePoint p;
  p.kernel = std::move(kernel);
  p.label = std::move(label);
  p.flops = flops;
  p.bytes = bytes;
  p.mean_ms = mean_ms;
  p.intensity = bytes > 0 ? flops / bytes : 0;
  const double seconds = mean_ms * 1e-3;
  p.gflops = seconds > 0 ? flops / seconds / 1e9 : 0;
  p.gbps = seconds > 0 ? bytes / seconds / 1e9 : 0;
  p.bound = binding_ceiling(roof, p.intensity);
  p.transfer = p.kernel == PlanEntry::kUploadBatch;
  if (p.transfer) return p;  // host to device: the device's ceilings do not bound it
  p.roof_gflops = attainable_gflops(roof, p.intensity);
  if (p.bound == Bound::Memory)
    p.pct_of_roof = roof.bandwidth_gbps > 0 ? 100.0 * p.gbps / roof.bandwidth_gbps : 0;
  else
    p.pct_of_roof = roof.compute_gflops > 0 ? 100.0 * p.gflops / roof.compute_gflops : 0;
  return p;
}

std::vector<RooflinePoint> roofline_points(const RoofCeilings& roof, const StepPlan& plan, const KernelTable& table) {
  std::vector<RooflinePoint> points;
  const std::vector<KernelRow> rows = table.entry_rows();
  for (const PlanEntry& e : plan.entries) {
    const std::string label = e.label();
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const KernelRow& r) { return r.name == label; });
    if (row == rows.end()) return {};  // the table measured another plan
    if (row->calls > 0) points.push_back(roofline_point(roof, e.kernel(), label, e.flops, e.bytes(), row->mean_ms));
  }
  return points;
}

std::vector<RooflinePoint> roofline_points(const RoofCeilings& roof, const std::vector<KernelRow>& rows) {
  std::vector<RooflinePoint> points;
  for (const KernelRow& r : rows) {
    if (r.calls <= 0 || r.mean_ms <= 0) continue;
    const double seconds = r.mean_ms * 1e-3;
    points.push_back(roofline_point(roof, r.name, r.name, r.gflops * 1e9 * seconds, r.gbps * 1e9 * seconds, r.mean_ms));
  }
  return points;
}

namespace {

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v) + 1e-9)); }

double unit(double v, double lo, double hi) {
  if (v <= 0) return 0;
  return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
}

}  // namespace

double RooflineAxes::u(double intensity) const { return unit(intensity, x_lo, x_hi); }
double RooflineAxes::v(double gflops) const { return unit(gflops, y_lo, y_hi); }

RooflineAxes roofline_axes(const std::vector<RooflinePoint>& points, const std::vector<RoofCeilings>& roofs) {
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  auto take = [](double v, double& lo, double& hi) {
    if (!(v > 0) || !std::isfinite(v)) return;
    lo = lo > 0 ? std::min(lo, v) : v;
    hi = std::max(hi, v);
  };
  for (const auto& p : points) {
    if (p.intensity <= 0 || p.gflops <= 0) continue;
    take(p.intensity, x_min, x_max);
    take(p.gflops, y_min, y_max);
  }
  for (const auto& r : roofs) {
    take(ridge_intensity(r), x_min, x_max);
    take(r.compute_gflops, y_min, y_max);
  }
  RooflineAxes a;
  if (x_max > 0) {
    a.x_lo = decade_below(x_min);
    a.x_hi = std::max(decade_above(x_max), a.x_lo * 10);
  }
  if (y_max > 0) {
    a.y_lo = decade_below(y_min);
    // The decade above the highest ceiling or dot (a power of ten itself gets a decade of headroom for its label).
    a.y_hi = std::max(decade_above(y_max), a.y_lo * 10);
  }
  // The memory ceiling enters at the left edge at bandwidth x x_lo: keep it on the chart when it is above y_lo.
  for (const auto& r : roofs)
    if (r.bandwidth_gbps > 0)
      a.y_lo = std::min(a.y_lo, std::max(decade_below(r.bandwidth_gbps * a.x_lo), a.y_hi * 1e-6));
  return a;
}

}  // namespace core
