// layernorm_backward: the gradient of a LayerNorm's input (Ba et al. 2016), each row on its own.
//   xhat = (in - mean) * rstd, dxhat = dout * gamma
//   din (rows,C) = [din +] rstd * (dxhat - mean over the row of dxhat - xhat * mean over the row of dxhat * xhat)
// accumulate: added to din (a transformer's residual stream: its gradient holds the branch's share already), in
// fp32 and rounded once to storage. The gain's and shift's gradients are layernorm_backward_params.
#include <vector>

#include "cpu/layernorm.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::LayerNormParams>();
  layer_norm_backward_data(p.rows, int(p.C), b.f32(2), b.f32(3), b.f32(4), b.f32(5), b.f32(1), b.f32(0), p.accumulate != 0,
                           pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::LayerNormParams>();
  std::vector<double> dg(p.C, 0.0), db(p.C, 0.0);  // layernorm_backward_params' part: not this kernel's output
  std::vector<double> din(b[0].size());
  layer_norm_backward_reference(int(p.rows), int(p.C), b[2], b[3], b[4], b[5], b[1], din, dg, db);
  for (size_t i = 0; i < din.size(); ++i) b[0][i] = (p.accumulate ? b[0][i] : 0.0) + din[i];
}

}  // namespace

const Kernel layernorm_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef layernorm_backward{
    .bindings = {{.name = "din", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::DLayerIn,
                  .elements = shape::B_x_C},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DAct,
                  .elements = shape::B_x_C},
                 {.name = "in_", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_C},
                 {.name = "gamma", .access = Access::Read, .elem = Elem::Storage, .role = Role::Weight,
                  .elements = shape::C},
                 {.name = "mean_", .access = Access::Read, .elem = Elem::F32, .role = Role::NormMean,
                  .elements = shape::B},
                 {.name = "rstd_", .access = Access::Read, .elem = Elem::F32, .role = Role::NormRstd,
                  .elements = shape::B}},
    .params_bytes = sizeof(core::LayerNormParams),
    .grid = Grid::Rows,
    .local_size = 64,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(layernorm_params(e)); },
    // per element: dxhat, its two sums (xhat recomputed twice), then the gradient's four operations
    .flops = [](const PlanEntry& e, Precision) { return 12.0 * e.B * e.C; },
    .bytes_read = [](const PlanEntry& e, Precision p) {
      return ((e.accumulate ? 3.0 : 2.0) * e.B * e.C + e.C) * e_of(p) + 8.0 * e.B;  // din too, accumulating
    },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p); }};

}  // namespace kernels
#endif
