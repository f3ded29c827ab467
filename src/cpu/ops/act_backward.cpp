// act_backward: the gradient through a hidden layer's activation, element by element (may run in place: dpreact and
// dout the same buffer).
//   dpreact (N) = dout (N) * act'(preact (N))   ReLU: 1 where preact > 0, else 0; GELU (tanh approximation) and
//   SiLU: their derivatives (cpu/fast_math.hpp)
#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::ActBackwardParams>();
  float* dpreact = b.f32(0);
  const float* dout = b.f32(1);
  const float* preact = b.f32(2);
  const core::Activation act = activation_of(p.act);
  const ElementwiseLoops& loops = elementwise_loops();  // at the CPU's SIMD level (elementwise_loops.hpp)
  pool.parallel_for(p.N, grain_for(act_work(act)), [=, &loops](size_t i0, size_t i1) {
    loops.gradient(dout + i0, preact + i0, dpreact + i0, static_cast<long>(i1 - i0), act);
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::ActBackwardParams>();
  for (uint32_t i = 0; i < p.N; ++i) b[0][i] = b[1][i] * ref_activation_derivative(b[2][i], activation_of(p.act));
}

}  // namespace

const Kernel act_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef act_backward{
    .bindings = {{.name = "dpreact", .access = Access::Write, .elem = Elem::Storage, .role = Role::DPreact,
                  .elements = shape::N},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DAct,
                  .elements = shape::N},
                 {.name = "preact", .access = Access::Read, .elem = Elem::Storage, .role = Role::Preact,
                  .elements = shape::N}},
    .params_bytes = sizeof(core::ActBackwardParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(static_cast<long>(e.N)); },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          return KernelArgs::of(core::ActBackwardParams{static_cast<uint32_t>(e.N), act_code(s.activation)});
        },
    .flops = [](const PlanEntry& e, Precision) { return n_of(e); },
    .bytes_read = [](const PlanEntry& e, Precision p) { return 2.0 * n_of(e) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); }};

}  // namespace kernels
#endif
