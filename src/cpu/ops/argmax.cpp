// argmax: the class a row of logits predicts, the index of its first maximum (torch.argmax's tie rule).
//   predictions (B) <- argmax over K of logits (B,K)
// The last kernel of the prediction pass (core::forward_pass): the decision boundary reads back one class per point
// instead of its K logits.
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::ArgmaxParams>();
  int32_t* predictions = b.at<int32_t>(0);
  const float* logits = b.f32(1);
  const size_t K = p.K;
  pool.parallel_for(p.B, grain_for(static_cast<double>(K)), [=](size_t b0, size_t b1) {
    for (size_t r = b0; r < b1; ++r) {
      const float* z = logits + r * K;
      size_t best = 0;
      for (size_t k = 1; k < K; ++k)
        if (z[k] > z[best]) best = k;  // strictly greater: the first of equal maxima stays
      predictions[r] = static_cast<int32_t>(best);
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::ArgmaxParams>();
  for (uint32_t r = 0; r < p.B; ++r) {
    const double* z = ref(b, 1) + r * p.K;
    uint32_t best = 0;
    for (uint32_t k = 1; k < p.K; ++k)
      if (z[k] > z[best]) best = k;
    b[0][r] = best;
  }
}

}  // namespace

const Kernel argmax{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef argmax{
    .bindings = {{.name = "predictions", .access = Access::Write, .elem = Elem::I32, .role = Role::Predictions},
                 {.name = "logits", .access = Access::Read, .elem = Elem::Storage, .role = Role::Logits,
                  .elements = shape::B_x_C}},
    .params_bytes = sizeof(core::ArgmaxParams),
    .grid = Grid::Rows,
    .local_size = 64,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B), 1}; },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::ArgmaxParams{u32(e.B), u32(e.C)}); },
    .flops = [](const PlanEntry&, Precision) { return 0.0; },  // comparisons, no arithmetic
    .bytes_read = [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision) { return e.B * kIdx; }};

}  // namespace kernels
#endif
