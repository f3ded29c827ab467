// layernorm_forward: each row of C features normalized (torch.nn.LayerNorm; Ba et al. 2016), the transformer's
// LayerNorm before attention, before the MLP and at the end.
//   mean (rows), rstd (rows) = the row's mean and 1 / sqrt(its biased variance + eps), fp32 in every precision
//   out (rows,C) = (in - mean) * rstd * gamma + beta
// A plan entry's B is the rows (batch x positions), C the features.
#include <vector>

#include "cpu/layernorm.hpp"
#include "cpu/ops/op.hpp"
#include "cpu/transformer_reference.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::LayerNormParams>();
  layer_norm_forward(p.rows, int(p.C), p.eps, b.f32(3), b.f32(4), b.f32(5), b.f32(0), b.f32(1), b.f32(2), pool);
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::LayerNormParams>();
  layer_norm_reference(int(p.rows), int(p.C), p.eps, b[3], b[4], b[5], b[0], b[1], b[2]);
}

}  // namespace

const Kernel layernorm_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef layernorm_forward{
    .bindings = {{.name = "out_", .access = Access::Write, .elem = Elem::Storage, .role = Role::Act,
                  .elements = shape::B_x_C},
                 {.name = "mean_", .access = Access::Write, .elem = Elem::F32, .role = Role::NormMean,
                  .elements = shape::B},
                 {.name = "rstd_", .access = Access::Write, .elem = Elem::F32, .role = Role::NormRstd,
                  .elements = shape::B},
                 {.name = "in_", .access = Access::Read, .elem = Elem::Storage, .role = Role::LayerIn,
                  .elements = shape::B_x_C},
                 {.name = "gamma", .access = Access::Read, .elem = Elem::Storage, .role = Role::Weight,
                  .elements = shape::C},
                 {.name = "beta", .access = Access::Read, .elem = Elem::Storage, .role = Role::Bias,
                  .elements = shape::C}},
    .params_bytes = sizeof(core::LayerNormParams),
    .grid = Grid::Rows,
    .local_size = 64,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), 1}; },
    .args = [](const PlanEntry& e, const StepArgs&) { return KernelArgs::of(layernorm_params(e)); },
    // per element: the mean's add, the centred square and its add, then subtract, two multiplies and an add
    .flops = [](const PlanEntry& e, Precision) { return 7.0 * e.B * e.C; },
    .bytes_read = [](const PlanEntry& e, Precision p) { return (e.B * e.C + 2.0 * e.C) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p) + 8.0 * e.B; }};

}  // namespace kernels
#endif
