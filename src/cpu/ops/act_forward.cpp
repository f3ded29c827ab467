// act_forward (--unfused): a hidden layer's activation as a kernel of its own, after bias_add.
//   preact (N) = out (N); out (N) = act(out (N)), in place (the same formula as matmul_forward's epilogue: relu,
//   gelu or silu, cpu/fast_math.hpp)
#include "cpu/elementwise_loops.hpp"
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::ActForwardParams>();
  float* preact = b.f32(0);
  float* out = b.f32(1);
  const core::Activation act = activation_of(p.act);
  // The activation at the CPU's SIMD level (elementwise_loops.hpp: a portable build's own GELU and SiLU run the slow
  // software FMA), applied to the copy in preact: each chunk copied, then activated from it.
  const ElementwiseLoops& loops = elementwise_loops();
  pool.parallel_for(p.N, grain_for(act_work(act)), [=, &loops](size_t i0, size_t i1) {
    std::copy(out + i0, out + i1, preact + i0);
    loops.activate(preact + i0, out + i0, static_cast<long>(i1 - i0), act);
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::ActForwardParams>();
  for (uint32_t i = 0; i < p.N; ++i) {
    b[0][i] = b[1][i];
    b[1][i] = ref_activation(b[1][i], activation_of(p.act));
  }
}

}  // namespace

const Kernel act_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef act_forward{
    .bindings = {{.name = "preact", .access = Access::Write, .elem = Elem::Storage, .role = Role::Preact,
                  .elements = shape::N},
                 {.name = "out", .access = Access::ReadWrite, .elem = Elem::Storage, .role = Role::Act,
                  .elements = shape::N}},
    .params_bytes = sizeof(core::ActForwardParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(static_cast<long>(e.N)); },
    .args =
        [](const PlanEntry& e, const StepArgs& s) {
          return KernelArgs::of(core::ActForwardParams{static_cast<uint32_t>(e.N), act_code(s.activation)});
        },
    .flops = [](const PlanEntry&, Precision) { return 0.0; },  // the activation is not counted (as matmul_forward)
    .bytes_read = [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return 2.0 * n_of(e) * e_of(p); }};

}  // namespace kernels
#endif
