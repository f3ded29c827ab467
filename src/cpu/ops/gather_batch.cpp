// gather_batch: the batch's rows of the dataset, kept whole on the device, into the first layer's input.
//   x_out (B,C) <- x[order[first + b]] (N,C), y_out (B) <- y[order[first + b]] (N)
// In 16-bit storage x_out holds the rounding of the fp32 dataset's values (a copy: bit for bit the nearest value).
#include <algorithm>

#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::GatherBatchParams>();
  float* x_out = b.f32(0);
  int32_t* y_out = b.at<int32_t>(1);
  const float* x = b.f32(2);
  const int32_t* y = b.at<int32_t>(3);
  const uint32_t* order = b.at<uint32_t>(4) + p.first;
  const size_t C = p.C;
  pool.parallel_for(p.B, grain_for(static_cast<double>(C)), [&](size_t b0, size_t b1) {
    for (size_t r = b0; r < b1; ++r) {
      const float* src = x + static_cast<size_t>(order[r]) * C;
      float* dst = x_out + r * C;
      std::copy_n(src, C, dst);  // memmove: the C library's, at the CPU's widest loads even in a portable build
      y_out[r] = y[order[r]];
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::GatherBatchParams>();
  for (long r = 0; r < long(p.B); ++r) {
    const long row = static_cast<long>(b[4][p.first + r]);
    for (long c = 0; c < long(p.C); ++c) b[0][r * p.C + c] = b[2][row * p.C + c];
    b[1][r] = b[3][row];
  }
}

}  // namespace

const Kernel gather_batch{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef gather_batch{
    .bindings = {{.name = "x_out", .access = Access::Write, .elem = Elem::Storage, .role = Role::XBatch,
                  .exact = true, .elements = shape::B_x_C},
                 {.name = "y_out", .access = Access::Write, .elem = Elem::I32, .role = Role::YBatch},
                 {.name = "x", .access = Access::Read, .elem = Elem::F32, .role = Role::DataX},
                 {.name = "y", .access = Access::Read, .elem = Elem::I32, .role = Role::DataY},
                 {.name = "order", .access = Access::Read, .elem = Elem::U32, .role = Role::Order}},
    .params_bytes = sizeof(core::GatherBatchParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return quads(e.B * e.C); },
    .args = [](const PlanEntry& e,
               const StepArgs& s) { return KernelArgs::of(core::GatherBatchParams{u32(e.B), u32(e.C), s.first, 0, 0xFFFFFFFFu}); },
    .flops = [](const PlanEntry&, Precision) { return 0.0; },
    // rows of the fp32 dataset, their indices and labels
    .bytes_read = [](const PlanEntry& e, Precision) { return e.B * e.C * 4.0 + 2 * e.B * kIdx; },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.B * e.C * e_of(p) + e.B * kIdx; }};

}  // namespace kernels
#endif
