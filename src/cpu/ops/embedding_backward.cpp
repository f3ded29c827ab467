// embedding_backward: the gradients of the token and position embeddings from the input's gradient dx (B*T, C).
//   dwte[v] (V, C) = (accumulate ? dwte[v] : 0) + the sum of dx over the positions whose token is v, in order
//   dwpe[t] (T, C) = the sum over the sequences b of dx[b, t], in order
// accumulate: the token embeddings tied to the output projection, whose backward wrote dwte first. A token outside
// 0..V-1 (never: the data is checked when it is read) adds to no row. Every sum runs over the positions in order, on
// any number of threads (split by features), as on the GPU: no atomics.
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::EmbeddingParams>();
  float* dwte = b.f32(0);
  float* dwpe = b.f32(1);
  const int32_t* tokens = b.at<int32_t>(2);
  const float* dx = b.f32(3);
  const size_t C = p.C, positions = size_t(p.B) * p.T;
  // A thread owns a range of features of every row: the positions are walked in order for each.
  pool.parallel_for(C, grain_for(double(positions)), [=](size_t c0, size_t c1) {
    if (!p.accumulate)
      for (size_t v = 0; v < p.V; ++v) std::fill(dwte + v * C + c0, dwte + v * C + c1, 0.0f);
    for (size_t t = 0; t < p.T; ++t) std::fill(dwpe + t * C + c0, dwpe + t * C + c1, 0.0f);
    for (size_t r = 0; r < positions; ++r) {
      const uint32_t token = static_cast<uint32_t>(tokens[r]);
      if (token >= p.V) continue;
      float* row = dwte + token * C;
      const float* g = dx + r * C;
      for (size_t c = c0; c < c1; ++c) row[c] += g[c];
    }
    for (size_t bt = 0; bt < positions; ++bt) {  // b ascending for each t: bt = b * T + t
      float* row = dwpe + (bt % p.T) * C;
      const float* g = dx + bt * C;
      for (size_t c = c0; c < c1; ++c) row[c] += g[c];
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::EmbeddingParams>();
  const size_t C = p.C, positions = size_t(p.B) * p.T;
  for (size_t v = 0; v < p.V; ++v)
    for (size_t c = 0; c < C; ++c) {
      double sum = p.accumulate ? b[0][v * C + c] : 0.0;
      for (size_t r = 0; r < positions; ++r)
        if (b[2][r] == double(v)) sum += b[3][r * C + c];
      b[0][v * C + c] = sum;
    }
  for (size_t t = 0; t < p.T; ++t)
    for (size_t c = 0; c < C; ++c) {
      double sum = 0;
      for (size_t s = 0; s < p.B; ++s) sum += b[3][(s * p.T + t) * C + c];
      b[1][t * C + c] = sum;
    }
}

}  // namespace

const Kernel embedding_backward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

size_t positions(const PlanEntry& e) { return size_t(e.B) * size_t(e.T); }

}  // namespace

// dwte is read-write: with `accumulate` it adds to what the output projection's backward wrote (a 16-bit CPU run
// widens it whole and rounds it back whole).
const core::KernelDef embedding_backward{
    .bindings = {{.name = "dwte",
                  .access = Access::ReadWrite,
                  .elem = Elem::Storage,
                  .role = Role::DTokenEmb,
                  .sum = true,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return size_t(e.OC) * size_t(e.C); }},
                 {.name = "dwpe",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::DPosEmb,
                  .sum = true,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return size_t(e.T) * size_t(e.C); }},
                 {.name = "tokens", .access = Access::Read, .elem = Elem::I32, .role = Role::Tokens},
                 {.name = "dx",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::DAct,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return positions(e) * size_t(e.C); }}},
    .params_bytes = sizeof(core::EmbeddingParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{uint64_t(e.OC + e.T) * uint64_t(e.C), 1};
        },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(
              core::EmbeddingParams{u32(e.B), u32(e.T), u32(e.C), u32(e.OC), e.accumulate ? 1u : 0u});
        },
    // two additions per element of dx: into its token's row and into its position's
    .flops = [](const PlanEntry& e, Precision) { return 2.0 * double(positions(e)) * double(e.C); },
    // compulsory: dx and the tokens once (and dwte with accumulate); dwte and dwpe written once
    .bytes_read =
        [](const PlanEntry& e, Precision p) {
          return double(positions(e)) * (kIdx + double(e.C) * e_of(p)) +
                 (e.accumulate ? double(e.OC * e.C) * e_of(p) : 0.0);
        },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double((e.OC + e.T) * e.C) * e_of(p); }};

}  // namespace kernels
#endif
