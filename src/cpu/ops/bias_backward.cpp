// bias_backward: a dense layer's bias gradient, the sum of the output gradient over the batch.
//   dbias (OC) = sum over b of dout (B,OC)  (overwritten)
#include "cpu/ops/op.hpp"

namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::BiasBackwardParams>();
  float* dbias = b.f32(0);
  const float* dout = b.f32(1);
  const long B = p.B, OC = p.OC;
  // Columns split over threads; each sums down the rows with contiguous (vectorizable) row segments.
  pool.parallel_for(p.OC, std::max<size_t>(8, grain_for(static_cast<double>(B))), [&](size_t o0, size_t o1) {
    for (size_t o = o0; o < o1; ++o) dbias[o] = 0;
    for (long r = 0; r < B; ++r) {
      const float* row = dout + r * OC;
      for (size_t o = o0; o < o1; ++o) dbias[o] += row[o];
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::BiasBackwardParams>();
  for (uint32_t o = 0; o < p.OC; ++o) {
    double sum = 0;
    for (uint32_t r = 0; r < p.B; ++r) sum += b[1][r * p.OC + o];
    b[0][o] = sum;
  }
}

}  // namespace

const Kernel bias_backward{
    .def = {.bindings = {{.name = "dbias", .access = Access::Write, .elem = Elem::Storage, .role = Role::DBias,
                          .sum = true, .elements = shape::OC},
                         {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DPreact,
                          .elements = shape::B_x_OC}},
            .params_bytes = sizeof(core::BiasBackwardParams),
            .grid = Grid::Rows,
            .local_size = 64,
            .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.OC), 1}; },
            .args = [](const PlanEntry& e,
                       const StepArgs&) { return KernelArgs::of(core::BiasBackwardParams{u32(e.B), u32(e.OC)}); },
            .flops = [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
            .bytes_read = [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); },
            .bytes_written = [](const PlanEntry& e, Precision p) { return e.OC * e_of(p); }},
    .tuned = tuned,
    .reference = reference};

}  // namespace cpu::ops
