// split_k_reduce: the second pass of a split-K GEMM (matmul_backward_weight, conv2d_backward_weight; gpu/gemm_config.hpp,
// choose_split_k). Each output is the sum of its `split_k` fp32 partial products, added in slice order 0, 1, ... (a
// fixed order: the same bits on every run and thread count), rounded once to the storage type, as the unsplit kernel
// rounds its fp32 accumulator.
//   dweight (N) = sum over s < split_k of partials (split_k, N)[s][i]
// The GPU runs it right after the split GEMM's pass, inside that entry's dispatch and timestamp (gpu::Kernels): it is
// never a plan entry of its own (core::split_k_reduce_entry gives its shape). The CPU never splits K; its twin exists
// for the parity test.
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::SplitKReduceParams>();
  float* out = b.f32(0);
  const float* partials = b.f32(1);
  const size_t count = p.count, slices = p.slices;
  pool.parallel_for(count, grain_for(static_cast<double>(slices)), [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      float sum = 0.0f;
      for (size_t s = 0; s < slices; ++s) sum += partials[s * count + i];
      out[i] = sum;
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::SplitKReduceParams>();
  for (uint32_t i = 0; i < p.count; ++i) {
    double sum = 0;
    for (uint32_t s = 0; s < p.slices; ++s) sum += b[1][size_t(s) * p.count + i];
    b[0][i] = sum;
  }
}

}  // namespace

const Kernel split_k_reduce{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

size_t partial_elements(const PlanEntry& e, const StepArgs&) { return e.N * e.split_k; }

}  // namespace

const core::KernelDef split_k_reduce{
    .bindings = {{.name = "dweight", .access = Access::Write, .elem = Elem::Storage, .role = Role::DWeight,
                  .sum = true, .elements = shape::N},
                 {.name = "partials", .access = Access::Read, .elem = Elem::F32,
                  .role = Role::SplitKPartials, .elements = partial_elements}},
    .params_bytes = sizeof(core::SplitKReduceParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{e.N, 1}; },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::SplitKReduceParams{u32(long(e.N)), e.split_k}); },
    .flops = [](const PlanEntry& e, Precision) { return n_of(e) * (e.split_k - 1.0); },
    .bytes_read = [](const PlanEntry& e, Precision) { return n_of(e) * e.split_k * 4.0; },
    .bytes_written = [](const PlanEntry& e, Precision p) { return n_of(e) * e_of(p); }};

}  // namespace kernels
#endif
