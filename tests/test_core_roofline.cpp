// The roofline arithmetic with synthetic ceilings and kernels: which ceiling binds, the attainable GFLOP/s, % of the
// roof, the points of a real step plan timed by a KernelTable, and where the dots land on the log-log axes.
#include <doctest/doctest.h>

#include <cmath>

#include "core/roofline.hpp"

namespace {

// 100 GB/s and 1000 GFLOP/s: the ridge is at 10 FLOP/byte.
core::RoofCeilings roof() {
  core::RoofCeilings r;
  r.bandwidth_gbps = 100;
  r.compute_gflops = 1000;
  return r;
}

}  // namespace

TEST_CASE("ridge, attainable GFLOP/s and the binding ceiling follow min(compute, bandwidth x intensity)") {
  const core::RoofCeilings r = roof();
  CHECK(core::ridge_intensity(r) == doctest::Approx(10.0));
  CHECK(core::attainable_gflops(r, 1.0) == doctest::Approx(100.0));     // 100 GB/s x 1 FLOP/byte
  CHECK(core::attainable_gflops(r, 0.25) == doctest::Approx(25.0));
  CHECK(core::attainable_gflops(r, 10.0) == doctest::Approx(1000.0));   // the ridge
  CHECK(core::attainable_gflops(r, 500.0) == doctest::Approx(1000.0));  // flat compute roof
  CHECK(core::binding_ceiling(r, 9.99) == core::Bound::Memory);
  CHECK(core::binding_ceiling(r, 10.0) == core::Bound::Compute);
  CHECK(core::binding_ceiling(r, 0.0) == core::Bound::Memory);

  core::RoofCeilings memory_only;
  memory_only.bandwidth_gbps = 50;
  CHECK(core::ridge_intensity(memory_only) == 0);
  CHECK(core::attainable_gflops(memory_only, 4.0) == doctest::Approx(200.0));
  CHECK(core::binding_ceiling(memory_only, 1e6) == core::Bound::Memory);
  core::RoofCeilings compute_only;
  compute_only.compute_gflops = 70;
  CHECK(core::attainable_gflops(compute_only, 0.01) == doctest::Approx(70.0));
  CHECK(core::binding_ceiling(compute_only, 0.01) == core::Bound::Compute);
}

TEST_CASE("a kernel's point: intensity, achieved figures, bound and % of roof") {
  const core::RoofCeilings r = roof();
  // 1 GFLOP over 1 GB in 20 ms: 1 FLOP/byte, 50 GFLOP/s and 50 GB/s under a 100 GFLOP/s roof: memory, 50%.
  const auto a = core::roofline_point(r, "k", "k L1", 1e9, 1e9, 20);
  CHECK(a.intensity == doctest::Approx(1.0));
  CHECK(a.gflops == doctest::Approx(50.0));
  CHECK(a.gbps == doctest::Approx(50.0));
  CHECK(a.bound == core::Bound::Memory);
  CHECK(a.roof_gflops == doctest::Approx(100.0));
  CHECK(a.pct_of_roof == doctest::Approx(50.0));

  // 100 GFLOP over 1 GB in 250 ms: 100 FLOP/byte, 400 GFLOP/s under the 1000 GFLOP/s roof: compute, 40%.
  const auto b = core::roofline_point(r, "k", "k L2", 1e11, 1e9, 250);
  CHECK(b.intensity == doctest::Approx(100.0));
  CHECK(b.gflops == doctest::Approx(400.0));
  CHECK(b.bound == core::Bound::Compute);
  CHECK(b.roof_gflops == doctest::Approx(1000.0));
  CHECK(b.pct_of_roof == doctest::Approx(40.0));

  // A kernel that only moves data: 0.1 GB in 4 ms = 25 GB/s, a quarter of the memory ceiling.
  const auto c = core::roofline_point(r, "gather_batch", "gather", 0, 1e8, 4);
  CHECK(c.intensity == 0);
  CHECK(c.gflops == 0);
  CHECK(c.bound == core::Bound::Memory);
  CHECK(c.pct_of_roof == doctest::Approx(25.0));

  // Unknown ceilings give no percentage rather than a made-up one.
  const auto d = core::roofline_point(core::RoofCeilings{}, "k", "k", 1e9, 1e9, 20);
  CHECK(d.pct_of_roof == 0);
}

TEST_CASE("the points of a real step plan come from its FLOPs and bytes and the table's measured times") {
  const core::StepPlan plan = core::build_step_plan(core::ModelShape({784, 256, 10}), 128, core::Activation::ReLU,
                                                    core::Optimizer::AdamW);
  core::KernelTable table(0);  // no warm-up: every step counts
  core::StepRecord rec;
  rec.step_ms = 0;
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    rec.kernel_ms.push_back(0.1 * static_cast<double>(i + 1));  // entry i takes (i+1) x 0.1 ms
    rec.step_ms += rec.kernel_ms.back();
  }
  table.add(plan, rec);
  table.add(plan, rec);

  const core::RoofCeilings r = roof();
  const auto points = core::roofline_points(r, plan, table);
  REQUIRE(points.size() == plan.entries.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const core::PlanEntry& e = plan.entries[i];
    const double seconds = 0.1e-3 * static_cast<double>(i + 1);
    const double intensity = e.flops / (e.bytes_read + e.bytes_written);
    CAPTURE(e.label());
    CHECK(points[i].kernel == std::string(e.kernel()));
    CHECK(points[i].intensity == doctest::Approx(intensity));
    CHECK(points[i].gflops == doctest::Approx(e.flops / seconds / 1e9));
    CHECK(points[i].bound == (intensity < 10.0 ? core::Bound::Memory : core::Bound::Compute));
    const double roof_gflops = std::min(1000.0, 100.0 * intensity);
    CHECK(points[i].roof_gflops == doctest::Approx(roof_gflops));
    if (intensity > 0)
      CHECK(points[i].pct_of_roof == doctest::Approx(100.0 * (e.flops / seconds / 1e9) / roof_gflops));
  }
  // The forward GEMM of layer 1 (128x784 · 256x784ᵀ) is far above the ridge, the optimizer far below it.
  CHECK(points[1].kernel == std::string("matmul_forward"));
  CHECK(points[1].bound == core::Bound::Compute);
  CHECK(points.back().kernel == std::string("adamw_update"));
  CHECK(points.back().bound == core::Bound::Memory);

  // A table of another plan (batch 64) is not mistaken for this one's.
  const core::StepPlan other = core::build_step_plan(core::ModelShape({784, 256, 10}), 64, core::Activation::ReLU,
                                                     core::Optimizer::AdamW);
  CHECK(core::roofline_points(r, other, table).empty());
}

TEST_CASE("the axes are whole decades around the dots and the ridge; dots land at their log positions") {
  const core::RoofCeilings r = roof();
  const std::vector<core::RooflinePoint> points = {core::roofline_point(r, "a", "a", 1e9, 1e9, 20),     // I 1, 50
                                                   core::roofline_point(r, "b", "b", 1e11, 1e9, 200)};  // I 100, 500
  const core::RooflineAxes axes = core::roofline_axes(points, {r});
  CHECK(axes.x_lo == doctest::Approx(1.0));
  CHECK(axes.x_hi == doctest::Approx(1000.0));  // 100 is a power of ten: one more decade
  CHECK(axes.y_lo == doctest::Approx(10.0));
  CHECK(axes.y_hi == doctest::Approx(10000.0));
  CHECK(axes.u(1.0) == doctest::Approx(0.0));
  CHECK(axes.u(10.0) == doctest::Approx(1.0 / 3));  // the ridge, a third of the way across
  CHECK(axes.u(100.0) == doctest::Approx(2.0 / 3));
  CHECK(axes.v(50.0) == doctest::Approx((std::log10(50.0) - 1.0) / 3.0));
  CHECK(axes.v(1000.0) == doctest::Approx(2.0 / 3));  // the compute ceiling
  // The memory ceiling at the left edge (100 GB/s x 1 FLOP/byte = 100 GFLOP/s) is on the chart.
  CHECK(axes.v(100.0 * axes.x_lo) >= 0.0);

  // A memory-bound kernel far left pulls the axis down to its decade.
  const std::vector<core::RooflinePoint> low = {core::roofline_point(r, "c", "c", 1e6, 1e8, 1)};  // I 0.01
  const core::RooflineAxes axes2 = core::roofline_axes(low, {r});
  CHECK(axes2.x_lo == doctest::Approx(0.01));
  CHECK(axes2.u(0.01) == doctest::Approx(0.0));
  CHECK(axes2.y_lo <= 100.0 * 0.01);  // the memory ceiling enters at 1 GFLOP/s and is visible
}
