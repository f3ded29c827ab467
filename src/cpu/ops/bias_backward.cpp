// bias_backward: a dense layer's bias gradient, the sum of the output gradient over the batch.
//   dbias (OC) = sum over b of dout (B,OC)  (overwritten)
#include <algorithm>
#include <vector>

#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

// Rows per partial sum: fixed by the shape (never the thread count), so the result is the same on any number of
// threads. A convolution's bias gradient sums B * OH * OW rows (100352 for the CNN's first layer at batch 128); a
// dense layer's batch of 512 is two blocks, one per thread (1024 rows had one thread sum it: seed-mlp's 512 x 2048
// took 0.15 ms, now 0.11, AVX-512, 2 threads).
constexpr long kRowBlock = 256;

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::BiasBackwardParams>();
  float* dbias = b.f32(0);
  const float* dout = b.f32(1);
  const long B = p.B, OC = p.OC, blocks = (B + kRowBlock - 1) / kRowBlock;
  // Each block of rows summed into its own partial, reading dout once, row after row (contiguous, vectorized over
  // the columns); then the partials summed in block order. One block (a batch of 256 or less): straight into dbias.
  std::vector<float> partials(size_t(blocks > 1 ? blocks * OC : 0));
  pool.parallel_for(size_t(blocks), 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      float* __restrict sum = blocks > 1 ? partials.data() + i * size_t(OC) : dbias;
      const long r0 = long(i) * kRowBlock, r1 = std::min(B, r0 + kRowBlock);
      std::fill_n(sum, OC, 0.0f);
      for (long r = r0; r < r1; ++r) {
        const float* __restrict row = dout + r * OC;
        for (long o = 0; o < OC; ++o) sum[o] += row[o];
      }
    }
  });
  if (blocks == 1) return;
  for (long o = 0; o < OC; ++o) {
    float total = 0;
    for (long i = 0; i < blocks; ++i) total += partials[size_t(i * OC + o)];
    dbias[o] = total;
  }
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

const Kernel bias_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef bias_backward{
    .bindings = {{.name = "dbias", .access = Access::Write, .elem = Elem::Storage, .role = Role::DBias,
                  .sum = true, .elements = shape::OC},
                 {.name = "dout", .access = Access::Read, .elem = Elem::Storage, .role = Role::DPreact,
                  .elements = shape::B_x_OC}},
    .params_bytes = sizeof(core::BiasBackwardParams),
    .grid = Grid::Rows,
    .local_size = 256,
    .shared_floats_per_invocation = 1,  // the lanes' tree
    .min_local_size = BIAS_BACKWARD_LANES,
    // OC columns x BIAS_BACKWARD_LANES row lanes (shaders/bias_backward.comp)
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.OC) * BIAS_BACKWARD_LANES, 1}; },
    .args = [](const PlanEntry& e,
               const StepArgs&) { return KernelArgs::of(core::BiasBackwardParams{u32(e.B), u32(e.OC)}); },
    .flops = [](const PlanEntry& e, Precision) { return static_cast<double>(e.B * e.OC); },
    .bytes_read = [](const PlanEntry& e, Precision p) { return e.B * e.OC * e_of(p); },
    .bytes_written = [](const PlanEntry& e, Precision p) { return e.OC * e_of(p); }};

}  // namespace kernels
#endif
