// gather_tokens: a transformer's batch of B sequences from the token dataset kept whole on the device, as gather_batch
// gathers images.
//   tokens (B,T) <- x[order[first + b]] (N,T), targets (B,T) <- y[order[first + b]] (N,T)
// The dataset holds each sequence's T token ids as fp32 (exact: ids are below 2^24; the vocabularies are at most
// 256) and its T targets, the next tokens, -1 where a target does not count (core::token_dataset).
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::GatherTokensParams>();
  int32_t* tokens = b.at<int32_t>(0);
  int32_t* targets = b.at<int32_t>(1);
  const float* x = b.f32(2);
  const int32_t* y = b.at<int32_t>(3);
  const uint32_t* order = b.at<uint32_t>(4) + p.first;
  const size_t T = p.T;
  pool.parallel_for(p.B, grain_for(static_cast<double>(T)), [=](size_t b0, size_t b1) {
    for (size_t r = b0; r < b1; ++r)
      for (size_t t = 0; t < T; ++t) {
        const size_t at = static_cast<size_t>(order[r]) * T + t;
        tokens[r * T + t] = static_cast<int32_t>(x[at]);
        targets[r * T + t] = y[at];
      }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::GatherTokensParams>();
  for (size_t r = 0; r < p.B; ++r) {
    const size_t row = static_cast<size_t>(b[4][p.first + r]);
    for (size_t t = 0; t < p.T; ++t) {
      b[0][r * p.T + t] = b[2][row * p.T + t];
      b[1][r * p.T + t] = b[3][row * p.T + t];
    }
  }
}

}  // namespace

const Kernel gather_tokens{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

const core::KernelDef gather_tokens{
    .bindings = {{.name = "tokens", .access = Access::Write, .elem = Elem::I32, .role = Role::Tokens},
                 {.name = "targets", .access = Access::Write, .elem = Elem::I32, .role = Role::YBatch},
                 {.name = "x", .access = Access::Read, .elem = Elem::F32, .role = Role::DataX},
                 {.name = "y", .access = Access::Read, .elem = Elem::I32, .role = Role::DataY},
                 {.name = "order", .access = Access::Read, .elem = Elem::U32, .role = Role::Order}},
    .params_bytes = sizeof(core::GatherTokensParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size = [](const PlanEntry& e) { return std::array<uint64_t, 2>{uint64_t(e.B * e.T), 1}; },
    .args = [](const PlanEntry& e,
               const StepArgs& s) { return KernelArgs::of(core::GatherTokensParams{u32(e.B), u32(e.T), s.first}); },
    .flops = [](const PlanEntry&, Precision) { return 0.0; },
    // the sequences' ids (fp32) and targets, and their indices
    .bytes_read = [](const PlanEntry& e, Precision) { return e.B * e.T * (4.0 + kIdx) + e.B * kIdx; },
    .bytes_written = [](const PlanEntry& e, Precision) { return 2.0 * e.B * e.T * kIdx; }};

}  // namespace kernels
#endif
