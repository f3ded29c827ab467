// embedding_forward: a transformer's input, each token's embedding plus its position's (GPT-2's wte and wpe).
//   x (B*T, C) = wte[tokens[b, t]] (V, C) + wpe[t] (T rows of the context's, C); the sum in fp32, rounded once
// A token outside 0..V-1 (never: the data is checked when it is read, core/text_data) has no row: only its
// position's embedding is added. A plan entry's B is the sequences, T their length, C the width, OC the vocabulary.
#include "cpu/ops/op.hpp"

#ifndef TRAINSCOPE_KERNEL_TABLE  // the CPU twin and the reference in double: trainscope_cpu
namespace cpu::ops {
namespace {

void tuned(const Bindings& b, const KernelArgs& a, ThreadPool& pool) {
  const auto p = a.as<core::EmbeddingParams>();
  float* x = b.f32(0);
  const int32_t* tokens = b.at<int32_t>(1);
  const float* wte = b.f32(2);
  const float* wpe = b.f32(3);
  const size_t C = p.C;
  pool.parallel_for(size_t(p.B) * p.T, grain_for(static_cast<double>(C)), [=](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const uint32_t token = static_cast<uint32_t>(tokens[r]);
      const float* pos = wpe + (r % p.T) * C;
      float* out = x + r * C;
      if (token < p.V)
        for (size_t c = 0; c < C; ++c) out[c] = wte[token * C + c] + pos[c];
      else
        for (size_t c = 0; c < C; ++c) out[c] = 0.0f + pos[c];
    }
  });
}

void reference(RefBindings b, const KernelArgs& a) {
  const auto p = a.as<core::EmbeddingParams>();
  for (size_t r = 0; r < size_t(p.B) * p.T; ++r) {
    const double token = b[1][r];
    for (size_t c = 0; c < p.C; ++c) {
      const double embedding = token >= 0 && token < p.V ? b[2][size_t(token) * p.C + c] : 0.0;
      b[0][r * p.C + c] = embedding + b[3][(r % p.T) * p.C + c];
    }
  }
}

}  // namespace

const Kernel embedding_forward{.tuned = tuned, .reference = reference};

}  // namespace cpu::ops
#else  // the kernel-table entry: trainscope_kernels (see cpu/ops/op.hpp)
namespace kernels {

namespace {

size_t positions(const PlanEntry& e) { return size_t(e.B) * size_t(e.T); }

}  // namespace

const core::KernelDef embedding_forward{
    .bindings = {{.name = "x",
                  .access = Access::Write,
                  .elem = Elem::Storage,
                  .role = Role::Act,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return positions(e) * size_t(e.C); }},
                 {.name = "tokens", .access = Access::Read, .elem = Elem::I32, .role = Role::Tokens},
                 {.name = "wte",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::TokenEmb,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return size_t(e.OC) * size_t(e.C); }},
                 {.name = "wpe",
                  .access = Access::Read,
                  .elem = Elem::Storage,
                  .role = Role::PosEmb,
                  .elements = [](const PlanEntry& e, const StepArgs&) { return size_t(e.T) * size_t(e.C); }}},
    .params_bytes = sizeof(core::EmbeddingParams),
    .grid = Grid::Elements,
    .local_size = 256,
    .grid_size =
        [](const PlanEntry& e) {
          return std::array<uint64_t, 2>{positions(e) * uint64_t(e.C), 1};
        },
    .args =
        [](const PlanEntry& e, const StepArgs&) {
          return KernelArgs::of(core::EmbeddingParams{u32(e.B), u32(e.T), u32(e.C), u32(e.OC), 0});
        },
    .flops = [](const PlanEntry& e, Precision) { return double(positions(e)) * double(e.C); },
    // compulsory: the tokens, each position's row of wte and its row of wpe (once per position index)
    .bytes_read =
        [](const PlanEntry& e, Precision p) {
          return double(positions(e)) * (kIdx + double(e.C) * e_of(p)) + double(e.T * e.C) * e_of(p);
        },
    .bytes_written = [](const PlanEntry& e, Precision p) { return double(positions(e)) * double(e.C) * e_of(p); }};

}  // namespace kernels
#endif
