// layernorm_backward_params: the gradients of a LayerNorm's gain and shift, sums over its rows.
//   dgamma (C) = sum over rows of dout * (in - mean) * rstd,  dbeta (C) = sum over rows of dout  (overwritten)
#include <vector>

#include "cpu/layernorm.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::LayerNormParams>();
  layer_norm_backward_params(p.rows, int(p.C), b.f32(3), b.f32(4), b.f32(5), b.f32(2), b.f32(0), b.f32(1), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::LayerNormParams>();
  std::vector<double> gamma(p.C, 1.0), din(size_t(p.rows) * p.C);  // din: layernorm_backward's part
  std::fill(b[0].begin(), b[0].end(), 0.0);
  std::fill(b[1].begin(), b[1].end(), 0.0);
  layer_norm_backward_reference(int(p.rows), int(p.C), b[3], gamma, b[4], b[5], b[2], din, b[0], b[1]);
}

}  // namespace

const Kernel layernorm_backward_params{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef layernorm_backward_params{
    .bindings = {{.name = "dgamma", .access = Access::Write, .elem = Elem::Storage, .role = Role::DWeight,
                  .sum = true, .elements = shape::C},
                 {.name = "dbeta", .access = Access::Write, .elem = Elem::Storage, .role = Role::DBias,
                  .sum = true, .elements = shape::C},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DAct,
                  .elements = shape::B_x_C},
                 {.name = "in_", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_C},
                 {.name = "mean_", .access = Access::Read, .elem = Elem::F32, .role = Role::NormMean,
                  .elements = shape::B},
                 {.name = "rstd_", .access = Access::Read, .elem = Elem::F32, .role = Role::NormRstd,
                  .elements = shape::B}},
    .params_bytes = sizeof(core::LayerNormParams),
    .grid = Grid::Rows,
    .local_size = 64,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.C), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(layernorm_params(e)); },
    // per element: xhat (a subtract and a multiply), its product with dout and two sums
    .flops = [](const PlanEntry& e, Precision) { return 5.0 * e.B * e.C; },
    .bytes_read = [](const PlanEntry& e, Precision p) { return 2.0 * e.B * e.C * e_of(p) + 8.0 * e.B; },
    .bytes_written = [](const PlanEntry& e, Precision p) { return 2.0 * e.C * e_of(p); }};

}  // namespace kernels
#endif
